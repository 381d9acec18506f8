package queue

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// encodeEvent must write what json.Marshal writes, so that consumers and
// the stored stream see no difference.
func TestEncodeEventMatchesMarshal(t *testing.T) {
	base := Event{V: 1, ID: "s1-3", Kind: "TOOL_OUTPUT", Time: time.Date(2026, 11, 27, 8, 0, 0, 123456789, time.UTC),
		Tenant: "acme", SessionID: "s1", TaskID: "t1", RootTaskID: "r1", Seq: 3}
	cases := map[string]func(*Event){
		"plain":          func(*Event) {},
		"no data":        func(e *Event) { e.Data = nil },
		"data":           func(e *Event) { e.Data = json.RawMessage(`{"text":"done","n":[1, 2]}`) },
		"spaced data":    func(e *Event) { e.Data = json.RawMessage("{\n  \"a\" : \"b\"\n}\n") },
		"html in data":   func(e *Event) { e.Data = json.RawMessage(`{"cmd":"a && b <c> \u2028"}`) },
		"no tenant":      func(e *Event) { e.Tenant = "" },
		"parent":         func(e *Event) { e.ParentTaskID = "p1" },
		"odd id":         func(e *Event) { e.ID = "a\"b\\c<d>&\x01é\xff" },
		"zone":           func(e *Event) { e.Time = e.Time.In(time.FixedZone("x", 3600)) },
		"zero time":      func(e *Event) { e.Time = time.Time{} },
		"string data":    func(e *Event) { e.Data = json.RawMessage(`"just a string"`) },
		"big numbers":    func(e *Event) { e.V, e.Seq = -7, 1<<63+5 },
		"unicode data":   func(e *Event) { e.Data = json.RawMessage(`{"t":"héllo \ud83d\ude00 ü"}`) },
		"long data text": func(e *Event) { e.Data = json.RawMessage(`{"t":"` + strings.Repeat("x", 5000) + `"}`) },
		"line separator": func(e *Event) { e.Data = json.RawMessage("{\"t\":\"a\u2028b\"}") },
		"para separator": func(e *Event) { e.Data = json.RawMessage("{\"t\":\"" + strings.Repeat("é", 300) + "\u2029\"}") },
		"ampersand only": func(e *Event) { e.Data = json.RawMessage(`{"t":"` + strings.Repeat("y", 3000) + `&"}`) },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			e := base
			edit(&e)
			want, err := json.Marshal(e)
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeEvent(&e)
			if err != nil {
				t.Fatalf("encodeEvent: %v", err)
			}
			if string(got) != string(want) {
				t.Errorf("encodeEvent\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestEncodeEventRefusesInvalidData(t *testing.T) {
	for _, data := range []string{`{"a":`, `{"a":1}x`, `<b>`} {
		e := Event{ID: "s1-1", Kind: "K", Data: json.RawMessage(data)}
		if _, err := encodeEvent(&e); err == nil || !strings.Contains(err.Error(), "is not valid JSON") {
			t.Errorf("data %q: err = %v, want one saying it is not valid JSON", data, err)
		}
	}
	e := Event{ID: "s1-1", Kind: "K", Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := encodeEvent(&e); err == nil {
		t.Error("a year past 9999 encoded; json.Marshal refuses it")
	}
}

// BenchmarkEncodeLargeEvent encodes a USER_INPUT event of a 4 KB prompt.
func BenchmarkEncodeLargeEvent(b *testing.B) {
	text, _ := json.Marshal(map[string]string{"kind": "USER_INPUT", "text": strings.Repeat("Refactor the payment router. ", 140)})
	e := Event{V: 1, ID: "s1-2", Kind: "USER_INPUT", Time: time.Now(), Tenant: "acme", SessionID: "s1", TaskID: "t1",
		RootTaskID: "t1", Seq: 2, Data: text}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := encodeEvent(&e); err != nil {
			b.Fatal(err)
		}
	}
}
