package sim

import (
	"strings"
	"testing"
)

// TestHeadAgreesWithEncodingJSON: the fast walk and encoding/json read the
// same model and stream from every kind of body.
func TestHeadAgreesWithEncodingJSON(t *testing.T) {
	bodies := []string{
		`{"model":"m1","stream":true}`,
		` { "stream" : true , "model" : "m\"2" } `,
		`{"messages":[{"role":"user","content":"a \"model\": \"x\", \\"}],"model":"m3","tools":[[1,2],{}],"stream":false}`,
		`{"system":"}]{[","max_tokens":10,"temperature":0.5,"n":null,"model":"m4","stream":true}`,
		`{"model":"caf\u00e9","stream":true,"x":{"model":"inner","stream":false}}`,
		`{"stream":"true","model":5}`,
		`{"model":"a\u0062c\n","stream":true}`, `{"model":"caf` + "\xc3\xa9" + `"}`, `{"model":"bad` + "\xff" + `"}`,
		`{"model":"tab` + "\t" + `"}`, `{"model":"x"y"}`, `{"model":"\""}`, `{"model":null}`, `{"model":12}`,
		`{"model":"abc\`, `{"model":"a\\","stream":true}`, `{"model":"a\\\"b","stream":true}`, `{"x":"\\\\"}`, `{"model":"q\"`,
		`{}`, `[]`, ``, `not json`, `{"model":`, `{"model":"unterminated`,
	}
	for _, b := range bodies {
		if got, want := head([]byte(b)), slowHead([]byte(b)); got != want {
			t.Errorf("head(%s) = %+v, encoding/json says %+v", b, got, want)
		}
	}
}

func BenchmarkHead(b *testing.B) {
	body := []byte(`{"model":"claude","max_tokens":100,"system":[{"type":"text","text":"` + strings.Repeat("you are helpful. ", 500) +
		`"}],"messages":[{"role":"user","content":"hi"}],"tools":[` + strings.Repeat(`{"name":"t","input_schema":{"type":"object","properties":{"a":{"type":"string"}}}},`, 30) + `{}],"stream":true}`)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if h := head(body); !h.Stream {
			b.Fatal("stream not found")
		}
	}
}
