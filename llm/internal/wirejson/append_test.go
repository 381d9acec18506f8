package wirejson

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestAppendStringMatchesEncodingJSON compares AppendString with
// json.Marshal on strings of every kind of character, and on random bytes.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		"", "plain", `quote " backslash \ slash /`, "<a href='x'>&amp;</a>",
		"\x00\x01\x07\b\t\n\v\f\r\x1b\x1f\x7f", "é 日本 🙂", "\u2028\u2029\u2027\u202a",
		"\xff\xfe bad \xc3 utf8 \xe2\x82", "\ufffd literal replacement", "tail\\",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString(nil, s); string(got) != string(want) {
			t.Errorf("AppendString(%q) = %s, encoding/json writes %s", s, got, want)
		}
	}
}

func TestAppendFields(t *testing.T) {
	b := append([]byte(nil), '{')
	b = AppendStringField(b, "type", "x<")
	b = AppendInt(b, "index", -3)
	b = append(AppendField(b, "o"), '{')
	b = AppendInt(b, "n", 0)
	b = append(b, '}', '}')
	if want := `{"type":"x\u003c","index":-3,"o":{"n":0}}`; string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
}

func BenchmarkAppendString(b *testing.B) {
	s := "You are a coding agent. Read before you edit; run the tests. <env> & \"quotes\" é\n"
	for range 5 {
		s += s
	}
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}
