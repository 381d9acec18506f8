// Package wirejson appends JSON text by hand for the hot paths of the
// adapters and the simulated provider, where a fixed-shape value would
// otherwise go through encoding/json's reflection (and, for maps, a sort of
// the keys) on every request or stream event.
//
// Its output is byte for byte what encoding/json.Marshal writes for the same
// value, HTML escaping included, so switching a caller to it changes no wire
// bytes. The functions are pure and safe for concurrent use.
package wirejson
