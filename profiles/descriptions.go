package profiles

import (
	"embed"
	"strings"
)

// Provider-shaped tool descriptions, in our own words, one file per tool:
// descriptions/<profile>_<tool>.md.
//
//go:embed descriptions/*.md
var descriptionFS embed.FS

// describe returns the embedded description of a profile's tool; a missing
// file is a programming error caught by the package tests.
func describe(profile, tool string) string {
	b, err := descriptionFS.ReadFile("descriptions/" + profile + "_" + tool + ".md")
	if err != nil {
		panic("profiles: missing description " + profile + "_" + tool + ".md")
	}
	return strings.TrimSpace(string(b))
}
