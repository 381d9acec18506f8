// Package skills finds SKILL.md files and offers them to the model: the
// system prompt lists each skill's name and description, and the skill
// tool loads a skill's instructions (and lists or reads its other files)
// when the model decides it needs them, so the context pays only for the
// skills used.
//
// # Where skills come from
//
// A skill is a directory holding SKILL.md: YAML front matter between two
// "---" lines with a name (lower-case letters, digits and hyphens, at most
// 64 characters) and a description (at most 1024 characters), then the
// body in Markdown. Discover looks in the repository of the task, through
// its execution environment (.agents/skills/*/SKILL.md, then
// .claude/skills/*/SKILL.md), then in the directories the operator
// configures on the worker (<dir>/*/SKILL.md). When two skills share a
// name the first found wins and the other is reported.
//
// A SKILL.md whose front matter is missing or malformed, or lacks a name or
// a description, is skipped and reported as a Problem naming the file and
// what is wrong; the fleet worker turns each into a WARNING event.
package skills
