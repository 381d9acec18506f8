package bedrock_test

import (
	"encoding/binary"
	"hash/crc32"
)

func appendCRC(b []byte) []byte { return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b)) }
