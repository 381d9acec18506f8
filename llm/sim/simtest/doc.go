// Package simtest is test support for the simulated provider (llm/sim):
// recorded provider traffic in go-vcr version 2 cassettes (LoadCassette),
// served verbatim by a sim.Server (Interaction.RawReply, Replay), and the
// shared conformance data those recordings live in, found by walking up
// from the working directory to ../shared/conformance next to the module
// (ConformanceDir, StreamedResponses, LargestStreamedResponse).
//
// It reads files outside the module by a path relative to the working
// directory, which only makes sense in a test of this repository, so it is
// test support: production code must not import it (depguard's
// no-test-support rule in .golangci.yml). Tests, llm/llmtest and
// llm/provider's cassette tests do.
package simtest
