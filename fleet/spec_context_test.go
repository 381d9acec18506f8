package fleet

import (
	"errors"
	"strings"
	"testing"
)

func TestContextSpecValidation(t *testing.T) {
	base := TaskSpec{Prompt: "do it", Profile: "openai"}
	ok := base
	ok.Context = ContextSpec{Window: 32_000, Reserve: 4000, KeepRecentRounds: 2, SummaryModel: "gpt-5-mini"}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a valid context spec: %v", err)
	}
	for _, c := range []struct {
		ctx   ContextSpec
		field string
	}{
		{ContextSpec{Window: -1}, "context.window"},
		{ContextSpec{Window: 1000}, "context.window"},
		{ContextSpec{Window: 32_000, Reserve: 20_000}, "context.reserve"},
		{ContextSpec{KeepRecentRounds: -2}, "context.keep_recent_rounds"},
		{ContextSpec{RepoMemory: true}, "context.repo_memory"}, // no environment.repo
		{ContextSpec{SummaryModel: strings.Repeat("m", MaxNameBytes+1)}, "context.summary_model"},
	} {
		s := base
		s.Context = c.ctx
		err := s.Validate()
		fe, isField := errors.AsType[*FieldError](err)
		if !isField || !strings.HasSuffix(fe.Field, c.field) {
			t.Errorf("%+v: err %v, want a FieldError on %s", c.ctx, err, c.field)
		}
	}
}
