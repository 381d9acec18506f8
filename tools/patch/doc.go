// Package patch parses and applies patches in the v4a format used by the
// apply_patch tool, with the semantics of codex-rs's apply_patch.
//
// # Format
//
//	*** Begin Patch
//	*** Add File: path        followed by "+line" lines
//	*** Delete File: path
//	*** Update File: path     optionally followed by "*** Move to: new/path"
//	@@ optional context hint  then " ctx", "-old", "+new" lines; several hunks per file
//	*** End of File           optional, anchors the last hunk at the end of the file
//	*** End Patch
//
// Parsing is lenient the way codex-rs is: markers may be padded with
// whitespace, the patch may be wrapped in a shell heredoc (<<'EOF' ... EOF),
// and CRLF line endings are accepted.
//
// # Two steps
//
// Parse turns text into a Patch and touches nothing. Apply then performs
// the operations in order through an FS (any execenv.Environment is one, so
// patches apply over SSH as well as locally). A patch that does not parse
// changes nothing. Apply does not roll back: when an operation fails, the
// ones before it stay applied and the returned *ApplyError lists them, so the
// model knows the state of the tree.
//
// # Locating hunks
//
// The lines of a hunk are searched from the end of the previous hunk (after
// its @@ hint line, when it has one), comparing lines exactly, then ignoring
// trailing whitespace, then ignoring whitespace at both ends, then also
// mapping Unicode punctuation to ASCII. A hunk with "*** End of File" is
// matched against the end of the file; a hunk with no old lines appends.
//
// One deliberate difference from codex-rs: a hunk without an @@ hint whose
// lines occur more often (from the search position on) than the patch has
// hunks with those same lines is refused as ambiguous instead of silently
// editing the first occurrence; the error asks for more context.
//
// Files written end with a newline. A file whose lines all end in CRLF keeps
// CRLF endings.
package patch
