package search

// Mode selects what Grep reports.
type Mode string

const (
	Content          Mode = "content"            // matching lines (the default)
	FilesWithMatches Mode = "files_with_matches" // one path per matching file
	Count            Mode = "count"              // matches per file
)

// GrepRequest is a content search. Pattern is a regular expression in the
// syntax shared by ripgrep and Go's regexp (RE2).
type GrepRequest struct {
	Pattern         string
	Path            string // file or directory; "" means WorkingDir
	Glob            string // only files whose name or relative path match, e.g. "*.go"
	CaseInsensitive bool
	Mode            Mode
	MaxResults      int // 0 means 100; counts lines, files or count rows by mode
}

// GrepMatch is one matching line. Path is as given or relative to the search root.
type GrepMatch struct {
	Path string `json:"path"`
	Line int    `json:"line"`
	Text string `json:"text"`
}

// GrepCountRow is the number of matching lines in one file.
type GrepCountRow struct {
	Path  string `json:"path"`
	Count int    `json:"count"`
}

// GrepResult holds the rows of the requested mode, sorted by path then line,
// and whether MaxResults cut them.
type GrepResult struct {
	Matches   []GrepMatch    `json:"matches,omitempty"`
	Files     []string       `json:"files,omitempty"`
	Counts    []GrepCountRow `json:"counts,omitempty"`
	Truncated bool           `json:"truncated,omitempty"`
}

// GlobRequest is a file-name search.
type GlobRequest struct {
	Pattern string // e.g. "**/*.go"; '**' matches any number of directories
	Path    string // base directory; "" means WorkingDir
	Limit   int    // 0 means 1000
}

// GlobResult lists matching files, newest first, as paths relative to the
// base directory, and whether Limit cut them (Total counts all matches seen).
type GlobResult struct {
	Paths     []string `json:"paths"`
	Truncated bool     `json:"truncated,omitempty"`
	Total     int      `json:"total"`
}
