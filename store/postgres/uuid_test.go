package postgres_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
)

// A uuid.UUID takes the direct path and encodes to the same bytes pgx's
// own path gives; a nil *uuid.UUID is still NULL, and other values and the
// text format are pgx's.
func TestUUIDEncodesAsPgxDoes(t *testing.T) {
	plain, direct := pgtype.NewMap(), pgtype.NewMap()
	postgres.RegisterUUID(direct)
	u := uuid.New()
	if _, ok := direct.PlanEncode(pgtype.UUIDOID, pgtype.BinaryFormatCode, u).(postgres.EncodeUUIDPlan); !ok {
		t.Fatalf("a uuid.UUID parameter is not encoded directly")
	}
	var nilUUID *uuid.UUID
	for _, v := range []any{u, &u, nilUUID, uuid.Nil, pgtype.UUID{Bytes: u, Valid: true}, u.String(), [16]byte(u)} {
		for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
			want, wantErr := plain.Encode(pgtype.UUIDOID, format, v, nil)
			got, err := direct.Encode(pgtype.UUIDOID, format, v, nil)
			if (err != nil) != (wantErr != nil) || !bytes.Equal(got, want) || (got == nil) != (want == nil) {
				t.Errorf("%#v (format %d) encodes to %q, %v; pgx gives %q, %v", v, format, got, err, want, wantErr)
			}
		}
	}
}

// Through a real server: uuids and arrays of them go in as parameters and
// come back into uuid.UUID, and a NULL into *uuid.UUID is a clear error.
func TestUUIDRoundTrips(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg, err := pgx.ParseConfig(pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	postgres.RegisterUUID(conn.TypeMap())

	a, b := uuid.New(), uuid.New()
	var got uuid.UUID
	var text string
	var all []uuid.UUID
	err = conn.QueryRow(ctx, `SELECT $1::uuid, $1::uuid::text, $2::uuid[]`, a, []uuid.UUID{a, b}).Scan(&got, &text, &all)
	if err != nil {
		t.Fatal(err)
	}
	if got != a || text != a.String() || len(all) != 2 || all[0] != a || all[1] != b {
		t.Fatalf("sent %s and [%s %s], got %s (%q) and %v", a, a, b, got, text, all)
	}
	var ptr *uuid.UUID
	if err := conn.QueryRow(ctx, `SELECT $1::uuid`, ptr).Scan(&ptr); err != nil || ptr != nil {
		t.Fatalf("a NULL through *uuid.UUID came back as %v, %v", ptr, err)
	}
	if err := conn.QueryRow(ctx, `SELECT NULL::uuid`).Scan(&got); err == nil {
		t.Fatal("a NULL scanned into uuid.UUID without an error")
	}
}

// BenchmarkEncodeUUID is one uuid parameter's encoding: pgx's own path
// ("pgx") against the direct one.
func BenchmarkEncodeUUID(b *testing.B) {
	u := uuid.New()
	for _, c := range []struct {
		name  string
		setup func(*pgtype.Map)
	}{{"pgx", func(*pgtype.Map) {}}, {"direct", postgres.RegisterUUID}} {
		b.Run(c.name, func(b *testing.B) {
			m := pgtype.NewMap()
			c.setup(m)
			buf := make([]byte, 0, 64)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Encode(pgtype.UUIDOID, pgtype.BinaryFormatCode, u, buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
