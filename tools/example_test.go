package tools_test

import (
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/tools"
)

func ExampleTruncate() {
	out, cut := tools.Truncate(strings.Repeat("ab", 10), tools.Limits{MaxChars: 6, Mode: tools.Tail})
	fmt.Println(cut)
	fmt.Println(out)
	// Output:
	// true
	// [WARNING: Tool output was truncated. First 14 characters were removed. The full output is available in the event stream.]
	//
	// ababab
}
