package postgres

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// registerUUID gives m a uuid type that encodes and scans google/uuid
// values directly, in the binary format both ends use for uuids.
//
// Without it pgx reaches a uuid.UUID only through its database/sql
// methods: each parameter was formatted as text, failed a binary encode
// (building an error with fmt), was parsed back and then encoded, and each
// scanned one was formatted and parsed again. Every task's claim and end
// pass several, and this was about 3 % of a worker's CPU on trivial tasks
// (BenchmarkEncodeUUID). Other values, and the text format, take pgx's own
// paths unchanged.
func registerUUID(m *pgtype.Map) {
	elem := &pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}}
	m.RegisterType(elem)
	m.RegisterType(&pgtype.Type{Name: "_uuid", OID: pgtype.UUIDArrayOID, Codec: &pgtype.ArrayCodec{ElementType: elem}})
}

// uuidCodec is pgx's UUIDCodec with a direct path for uuid.UUID.
type uuidCodec struct{ pgtype.UUIDCodec }

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return encodeUUID{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok && format == pgtype.BinaryFormatCode {
		return scanUUID{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

// encodeUUID writes a uuid.UUID's 16 bytes, the binary form of a uuid.
type encodeUUID struct{}

func (encodeUUID) Encode(value any, buf []byte) ([]byte, error) {
	u := value.(uuid.UUID)
	return append(buf, u[:]...), nil
}

// scanUUID reads the binary form of a uuid into a *uuid.UUID.
type scanUUID struct{}

func (scanUUID) Scan(src []byte, dst any) error {
	if src == nil {
		return errors.New("cannot scan NULL into *uuid.UUID: scan a nullable uuid into pgtype.UUID")
	}
	if len(src) != len(uuid.UUID{}) {
		return fmt.Errorf("a binary uuid has 16 bytes, got %d", len(src))
	}
	copy(dst.(*uuid.UUID)[:], src)
	return nil
}
