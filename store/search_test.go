package store_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/agentfleet/agentfleet/store"
)

func TestParseQuery(t *testing.T) {
	cases := []struct {
		q    string
		want store.SearchQuery
	}{
		{`linter timeout`, store.SearchQuery{Any: [][]string{{"linter", "timeout"}}}},
		{`"failing linter" -flaky`, store.SearchQuery{Any: [][]string{{"failing linter"}}, None: []string{"flaky"}}},
		{`a OR b c or`, store.SearchQuery{Any: [][]string{{"a"}, {"b", "c"}}}},
		{`"or" (* "unclosed phrase`, store.SearchQuery{Any: [][]string{{"or", "unclosed phrase"}}}},
		{`x -"two words"`, store.SearchQuery{Any: [][]string{{"x"}}, None: []string{"two words"}}},
	}
	for _, c := range cases {
		got, err := store.ParseQuery(c.q)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseQuery(%q) = %+v, %v; want %+v", c.q, got, err, c.want)
		}
	}
	for _, q := range []string{"-only -excluded", "(*) --", ""} {
		if _, err := store.ParseQuery(q); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("ParseQuery(%q): %v, want ErrInvalid", q, err)
		}
	}
}
