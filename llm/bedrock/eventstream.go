package bedrock

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// The AWS event stream framing (application/vnd.amazon.eventstream) that
// InvokeModelWithResponseStream answers with. A message is
//
//	total length   uint32, big-endian, the whole message
//	headers length uint32
//	prelude CRC    uint32, CRC-32 (IEEE) of the 8 bytes above
//	headers        name length (1 byte), name, value type (1 byte), value
//	payload        total - headers - 16 bytes
//	message CRC    uint32, CRC-32 of everything before it
//
// Header values are typed; Bedrock sends strings (:message-type,
// :event-type, :content-type, :exception-type), and the other types are
// decoded so that a message carrying one is still read.

// Limits of a message, as the format defines them.
const (
	preludeLen    = 12
	minMessageLen = 16
	maxMessageLen = 16 << 20
	maxHeadersLen = 128 << 10
	headerString  = 7
	headerBytes   = 6
)

// Message is one event stream message.
type Message struct {
	Headers map[string]HeaderValue
	Payload []byte
}

// HeaderValue is a typed header value: Type is the wire type (0 true,
// 1 false, 2 byte, 3 int16, 4 int32, 5 int64, 6 bytes, 7 string,
// 8 timestamp in ms, 9 UUID) and Value its bytes as sent (big-endian for
// numbers).
type HeaderValue struct {
	Type  byte
	Value []byte
}

// String returns a string or bytes header's value, else "".
func (m Message) String(name string) string {
	h, ok := m.Headers[name]
	if !ok || (h.Type != headerString && h.Type != headerBytes) {
		return ""
	}
	return string(h.Value)
}

// ErrFrame is a malformed message: a bad length, a CRC mismatch or a
// header that runs past its block.
var ErrFrame = errors.New("bedrock: malformed event stream message")

// ReadMessage reads one message. It returns io.EOF at a clean end between
// messages and io.ErrUnexpectedEOF for a stream cut inside one.
func ReadMessage(r *bufio.Reader) (Message, error) {
	var prelude [preludeLen]byte
	if _, err := io.ReadFull(r, prelude[:]); err != nil {
		return Message{}, err
	}
	total := binary.BigEndian.Uint32(prelude[0:4])
	hlen := binary.BigEndian.Uint32(prelude[4:8])
	if crc32.ChecksumIEEE(prelude[:8]) != binary.BigEndian.Uint32(prelude[8:12]) {
		return Message{}, fmt.Errorf("%w: prelude CRC mismatch", ErrFrame)
	}
	if total < minMessageLen || total > maxMessageLen || hlen > maxHeadersLen || hlen > total-minMessageLen {
		return Message{}, fmt.Errorf("%w: lengths %d total, %d headers", ErrFrame, total, hlen)
	}
	rest, err := readN(r, int64(total-preludeLen))
	if err != nil {
		return Message{}, err
	}
	body, crc := rest[:len(rest)-4], binary.BigEndian.Uint32(rest[len(rest)-4:])
	sum := crc32.Update(crc32.ChecksumIEEE(prelude[:]), crc32.IEEETable, body)
	if sum != crc {
		return Message{}, fmt.Errorf("%w: message CRC mismatch", ErrFrame)
	}
	headers, err := decodeHeaders(body[:hlen])
	if err != nil {
		return Message{}, err
	}
	return Message{Headers: headers, Payload: body[hlen:]}, nil
}

// readN reads n bytes, growing its buffer as they arrive, so a length
// that claims more than the stream holds costs no large allocation.
func readN(r io.Reader, n int64) ([]byte, error) {
	var buf bytes.Buffer
	got, err := io.CopyN(&buf, r, n)
	if got < n {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf.Bytes(), nil
}

// valueLen is the fixed size of each header value type; -1 means a 2-byte
// length prefix follows.
var valueLen = [10]int{0, 0, 1, 2, 4, 8, -1, -1, 8, 16}

func decodeHeaders(b []byte) (map[string]HeaderValue, error) {
	out := map[string]HeaderValue{}
	for len(b) > 0 {
		n := int(b[0])
		if n == 0 || len(b) < 1+n+1 {
			return nil, fmt.Errorf("%w: header name runs past the headers", ErrFrame)
		}
		name, typ := string(b[1:1+n]), b[1+n]
		b = b[2+n:]
		if int(typ) >= len(valueLen) {
			return nil, fmt.Errorf("%w: header %q has unknown type %d", ErrFrame, name, typ)
		}
		size := valueLen[typ]
		if size < 0 {
			if len(b) < 2 {
				return nil, fmt.Errorf("%w: header %q has no length", ErrFrame, name)
			}
			size, b = int(binary.BigEndian.Uint16(b)), b[2:]
		}
		if len(b) < size {
			return nil, fmt.Errorf("%w: header %q runs past the headers", ErrFrame, name)
		}
		out[name] = HeaderValue{Type: typ, Value: b[:size:size]}
		b = b[size:]
	}
	return out, nil
}
