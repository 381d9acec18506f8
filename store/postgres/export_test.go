package postgres

// RegisterUUID is registerUUID, for the tests of package postgres_test.
var RegisterUUID = registerUUID

// EncodeUUIDPlan is the plan a uuid.UUID parameter takes once registered.
type EncodeUUIDPlan = encodeUUID
