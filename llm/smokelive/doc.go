// Package smokelive holds `make smoke-live`: the end-to-end run of seed
// 000's Definition of Done (section 9.13 of the coding agent loop spec)
// against real providers, opt-in and never part of CI: TestSmokeLive
// (smoke_test.go) builds only with the smokelive build tag. The checks
// themselves (harness_test.go) build without it, and sim_test.go runs the
// model-call checks against the simulated provider with every `go test`,
// so the harness is tested even where no key is set.
//
// For each provider whose credentials the environment holds, it checks,
// through llm/provider as a worker builds clients:
//
//   - a streamed answer (text deltas, then EventFinish);
//   - a tool round (a required tool call, its result, the answer using it);
//   - a cached second request (the same long prefix twice: the second
//     reports cache-read tokens; retried twice, since providers cache
//     asynchronously);
//   - structured output (a JSON schema answer, validated);
//   - cost recorded (the model is priced, llm/pricing, and each call's
//     cost is above zero);
//   - the seed's session steps with the provider's profile and a local
//     environment: create hello.py, read and edit it, run it, and read a
//     100,000-character file whose TOOL_CALL_END is whole while the model
//     sees a truncation marker.
//
// A provider without credentials is skipped with a message naming what to
// set. These skips are plain t.Skip, not testenv.SkipOrFatal: a live run
// is opt-in and never under AGENTFLEET_REQUIRE_INTEGRATION (CI has no
// provider keys), and the part CI does run, sim_test.go, skips nothing.
// Providers and their variables:
//
//	anthropic   ANTHROPIC_API_KEY                       (model: AGENTFLEET_SMOKE_ANTHROPIC_MODEL)
//	openai      OPENAI_API_KEY                          (AGENTFLEET_SMOKE_OPENAI_MODEL)
//	gemini      GEMINI_API_KEY or GOOGLE_API_KEY        (AGENTFLEET_SMOKE_GEMINI_MODEL)
//	bedrock     AGENTFLEET_SMOKE_BEDROCK_MODEL, credentials and region from the AWS SDK's chain
//	vertex      AGENTFLEET_SMOKE_VERTEX_PROJECT (+ _REGION, default global; _MODEL), ADC
//	azure       AZURE_OPENAI_ENDPOINT and AGENTFLEET_SMOKE_AZURE_DEPLOYMENT; key or Entra ID
//	chatcompat  AGENTFLEET_SMOKE_BASE_URL and AGENTFLEET_SMOKE_MODEL (+ _DIALECT, _API_KEY)
//
// An OpenAI-compatible host that does not report cache reads, or a model
// the price table does not know, skips that one check with a message.
package smokelive
