package bedrock_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/agentfleet/agentfleet/llm/bedrock"
	"github.com/agentfleet/agentfleet/llm/bedrock/bedrocktest"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// A framed message reads back with its headers and payload; a flipped byte
// in the prelude or the body fails its CRC; a cut inside a message is an
// unexpected EOF and a clean end between messages io.EOF.
func TestEventStreamFraming(t *testing.T) {
	msg := bedrocktest.EncodeMessage([][2]string{{":message-type", "event"}, {":event-type", "chunk"}}, []byte(`{"bytes":"e30="}`))
	two := append(append([]byte(nil), msg...), msg...)
	r := bufio.NewReader(bytes.NewReader(two))
	for i := range 2 {
		m, err := bedrock.ReadMessage(r)
		if err != nil {
			t.Fatal(err)
		}
		if m.String(":event-type") != "chunk" || string(m.Payload) != `{"bytes":"e30="}` {
			t.Fatalf("message %d: %+v", i, m)
		}
	}
	if _, err := bedrock.ReadMessage(r); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last message: %v, want io.EOF", err)
	}
	for _, at := range []int{5, 14, len(msg) - 8, len(msg) - 1} {
		bad := append([]byte(nil), msg...)
		bad[at] ^= 0x40
		if _, err := bedrock.ReadMessage(bufio.NewReader(bytes.NewReader(bad))); !errors.Is(err, bedrock.ErrFrame) {
			t.Errorf("byte %d flipped: %v, want ErrFrame", at, err)
		}
	}
	if _, err := bedrock.ReadMessage(bufio.NewReader(bytes.NewReader(msg[:len(msg)-3]))); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("cut message: %v, want io.ErrUnexpectedEOF", err)
	}
}

// Typed headers other than strings (a timestamp, an int32) are read and
// skipped correctly.
func TestEventStreamTypedHeaders(t *testing.T) {
	// :date as a timestamp (type 8) and a count as int32 (type 4), then a string.
	var h []byte
	h = append(h, 5)
	h = append(h, ":date"...)
	h = append(h, 8, 0, 0, 1, 2, 3, 4, 5, 6)
	h = append(h, 5)
	h = append(h, "count"...)
	h = append(h, 4, 0, 0, 0, 7)
	h = append(h, 3)
	h = append(h, "typ"...)
	h = append(h, 7, 0, 2, 'o', 'k')
	msg := frame(h, []byte("payload"))
	m, err := bedrock.ReadMessage(bufio.NewReader(bytes.NewReader(msg)))
	if err != nil {
		t.Fatal(err)
	}
	if m.String("typ") != "ok" || m.Headers[":date"].Type != 8 || len(m.Headers["count"].Value) != 4 || string(m.Payload) != "payload" {
		t.Fatalf("message %+v", m)
	}
}

// frame builds a message around raw header bytes, with correct CRCs.
func frame(headers, payload []byte) []byte {
	total := 12 + len(headers) + len(payload) + 4
	out := []byte{byte(total >> 24), byte(total >> 16), byte(total >> 8), byte(total),
		byte(len(headers) >> 24), byte(len(headers) >> 16), byte(len(headers) >> 8), byte(len(headers))}
	out = appendCRC(out)
	out = append(out, headers...)
	out = append(out, payload...)
	return appendCRC(out)
}

// FuzzReadMessage: any bytes either frame messages or fail with an error;
// never a panic, and a message read has a payload within its frame.
func FuzzReadMessage(f *testing.F) {
	f.Add(bedrocktest.EncodeMessage([][2]string{{":message-type", "event"}}, []byte("{}")))
	f.Add(bedrocktest.EncodeMessage(nil, nil))
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bufio.NewReader(bytes.NewReader(b))
		for range 1000 {
			m, err := bedrock.ReadMessage(r)
			if err != nil {
				return
			}
			if len(m.Payload) > len(b) {
				t.Fatalf("payload of %d bytes from %d input bytes", len(m.Payload), len(b))
			}
		}
	})
}

// FuzzDecodeStream: the Bedrock stream decoder keeps the stream contract
// (one terminal element) whatever the body, seeded with a whole and a cut
// stream.
func FuzzDecodeStream(f *testing.F) {
	var whole []byte
	for _, e := range anthropicEvents {
		whole = append(whole, chunkMessage(e)...)
	}
	f.Add(whole)
	f.Add(whole[:len(whole)/2])
	llmtest.FuzzDecoder(f, bedrock.DecodeStream)
}
