package tools

// Core returns a new registry with the default core tools: read_file,
// read_many_files, write_file, edit_file, apply_patch, shell, grep, glob and
// list_dir. web_fetch is not included; add WebFetch(cfg) when configuration
// allows network access.
func Core() *Registry {
	return NewRegistry(CoreTools()...)
}

// CoreTools returns the default core tools in their registration order.
func CoreTools() []Tool {
	return []Tool{ReadFile(), ReadManyFiles(), WriteFile(), EditFile(), ApplyPatch(), Shell(), Grep(), Glob(), ListDir()}
}
