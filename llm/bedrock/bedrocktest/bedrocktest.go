// Package bedrocktest is test support for llm/bedrock: it frames AWS event
// stream messages (application/vnd.amazon.eventstream) as a Bedrock server
// sends them, for tests that serve a stream to the adapter over real HTTP.
// The format is described in llm/bedrock's eventstream.go, whose
// ReadMessage is the decoder; production code only decodes, so the encoder
// lives here and production code must not import it (depguard's
// no-test-support rule in .golangci.yml).
package bedrocktest

import (
	"encoding/binary"
	"hash/crc32"
)

const (
	preludeLen   = 12 // total length, headers length, prelude CRC
	headerString = 7  // the header value type of a string
)

// EncodeMessage frames a message whose headers are all strings, in order,
// with its prelude and message CRCs, as a Bedrock server does.
func EncodeMessage(headers [][2]string, payload []byte) []byte {
	var h []byte
	for _, kv := range headers {
		h = append(h, byte(len(kv[0])))
		h = append(h, kv[0]...)
		h = append(h, headerString)
		h = binary.BigEndian.AppendUint16(h, uint16(len(kv[1])))
		h = append(h, kv[1]...)
	}
	total := preludeLen + len(h) + len(payload) + 4
	out := make([]byte, 0, total)
	out = binary.BigEndian.AppendUint32(out, uint32(total))
	out = binary.BigEndian.AppendUint32(out, uint32(len(h)))
	out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
	out = append(out, h...)
	out = append(out, payload...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}
