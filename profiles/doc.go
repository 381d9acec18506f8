// Package profiles holds the provider-aligned profiles: for each model
// family the tools it was trained on, its system prompt and its request
// options. Each *Profile implements agent.Profile.
//
// # Profiles
//
//   - OpenAI (codex-rs shaped): read_file, apply_patch (v4a, argument
//     "input"), write_file, shell (command string, workdir, timeout_ms; 10 s
//     default), grep, glob. OpenAI-compatible servers (Ollama, vLLM,
//     llama.cpp) use this profile over llm/chatcompat (ForProvider
//     "chatcompat").
//   - Anthropic (Claude Code shaped): read_file, write_file, edit_file
//     (old_string/new_string, replace_all), shell (command, timeout in ms,
//     description; 120 s default), grep (output_mode files_with_matches by
//     default, content, count; glob, -i, head_limit), glob.
//   - Gemini (gemini-cli shaped): read_file (start_line/end_line),
//     read_many_files (include), write_file, edit_file (instruction,
//     old_string, new_string, allow_multiple), shell (dir_path; 10 s
//     default), grep (dir_path, include_pattern, names_only,
//     total_max_matches), glob (dir_path), list_dir (dir_path, depth).
//     web_fetch needs a network policy: add tools.WebFetch(cfg) WithTools.
//
// A tool has the same name in every profile that offers it; its parameters
// follow each native agent (testdata/<profile>_tools.golden.json pins every
// schema). Every tool but the shell declares the paths a call touches in
// its own argument names (tools.Tool.Paths: openai's apply_patch reads the
// patch in "input", gemini's tools "dir_path" and "include"), so the
// permission layer checks what each profile's model actually sends; a
// custom tool without Paths is treated as touching any path. All returns
// every profile, for checks that must hold for each. Every executor is a core executor of package tools (RunShell,
// RunGrep, ...) behind a provider-shaped schema.
// Sessions add spawn_agent, send_input, wait and close_agent themselves.
// Custom tools register on a profile's Registry (or WithTools); latest wins.
//
// # System prompt
//
// BuildSystemPrompt layers, in order: the profile's base instructions (our
// own text, embedded templates under prompts/), the environment block, a
// git snapshot taken through env.Exec (branch, counts of modified and
// untracked files, the last 10 commits), a summary of the tools, the
// project instruction files, and the user's instructions last. Project files
// are AGENTS.md plus CLAUDE.md (anthropic), GEMINI.md (gemini) or
// .codex/instructions.md (openai), found from the git root (or the working
// directory) down to the working directory, root first; their total is cut
// at 32 KB with ProjectDocMarker. The date comes from WithClock, so a test
// renders the same prompt every time (testdata/*.golden, -update to rewrite).
//
// # Provider options
//
// Reasoning effort travels in llm.Request.ReasoningEffort and each adapter
// maps it to its wire form (OpenAI reasoning.effort; Anthropic thinking
// budget_tokens; Gemini thinkingBudget, or thinkingLevel for Gemini 3).
// ProviderOptions adds what each profile wants on top: openai store=false
// and, with an effort, a reasoning summary and encrypted reasoning items;
// anthropic the interleaved-thinking beta when thinking is on plus any
// WithBetaHeaders (e.g. the 1M-context beta); gemini safety settings (block
// only high-probability harm) and, with an effort, thought summaries.
//
// Profiles are immutable after construction except for their registry,
// which is safe for concurrent use.
package profiles
