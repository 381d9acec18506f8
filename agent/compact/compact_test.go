package compact

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

// randomTurns is a history as the loop writes it: a user turn, then
// assistant turns, each with calls followed by one or more result turns,
// steering now and then, and compaction records.
func randomTurns(r *rand.Rand, n int) []Turn {
	turns := []Turn{{Kind: KindUser, Chars: 50 + r.IntN(500), Stubbed: 0}}
	for len(turns) < n {
		switch r.IntN(10) {
		case 0:
			turns = append(turns, Turn{Kind: KindUser, Chars: 20 + r.IntN(200)})
		case 1:
			turns = append(turns, Turn{Kind: KindOther})
		default:
			turns = append(turns, Turn{Kind: KindAssistant, Chars: 50 + r.IntN(400)})
			for range 1 + r.IntN(2) {
				c := 100 + r.IntN(20000)
				turns = append(turns, Turn{Kind: KindResults, Chars: c, Stubbed: min(c, 200)})
			}
		}
	}
	for i := range turns {
		if turns[i].Stubbed == 0 {
			turns[i].Stubbed = turns[i].Chars
		}
	}
	return turns
}

func TestRunPropertiesOverRandomHistories(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for iter := range 2000 {
		turns := randomTurns(r, 2+r.IntN(120))
		b := Config{}.BudgetFor([]int{8000, 32000, 128000}[r.IntN(3)])
		old := View{}
		if r.IntN(2) == 0 { // an earlier compaction
			old.Start = max(nextStart(turns, r.IntN(len(turns))), 0)
			old.SummaryThrough, old.Summary = old.Start, "earlier notes"
			old.PruneBefore = old.Start
		}
		calls := 0
		p := Params{Turns: turns, View: old, Fixed: r.IntN(20000), Budget: b, KeepRecent: 1 + r.IntN(4),
			Tokens: func(c int) int { return c / CharsPerToken }, Reason: ReasonThreshold,
			Summarize: func(_ context.Context, prev string, from, to int) (string, error) {
				calls++
				if from >= to || validStart(turns, from) == false && from != 0 {
					t.Fatalf("iter %d: summary of [%d, %d)", iter, from, to)
				}
				if r.IntN(3) == 0 {
					return "", errors.New("summary failed")
				}
				return "notes", nil
			}}
		rec, err := Run(context.Background(), p)
		v := rec.View
		switch {
		case v.Start < old.Start || v.PruneBefore < old.PruneBefore:
			t.Fatalf("iter %d: the view went back: %+v -> %+v", iter, old, v)
		case v.Start > 0 && !validStart(turns, v.Start):
			t.Fatalf("iter %d: the view starts at turn %d (%v), separating tool results from their call", iter, v.Start, turns[v.Start].Kind)
		case v.SummaryThrough > v.Start:
			t.Fatalf("iter %d: the summary covers turns the view still sends: %+v", iter, v)
		case v.Start > lastStart(turns) && lastStart(turns) >= 0:
			t.Fatalf("iter %d: the latest round was dropped: start %d, last %d", iter, v.Start, lastStart(turns))
		case rec.TokensAfter > rec.TokensBefore:
			t.Fatalf("iter %d: compaction grew the request: %d -> %d", iter, rec.TokensBefore, rec.TokensAfter)
		}
		var tl *TooLargeError
		if err != nil && (!errors.As(err, &tl) || rec.TokensAfter <= b.Hard) {
			t.Fatalf("iter %d: err %v with %d tokens after, hard limit %d", iter, err, rec.TokensAfter, b.Hard)
		}
		if err == nil && rec.TokensAfter > b.Hard {
			t.Fatalf("iter %d: %d tokens left over the hard limit %d without an error", iter, rec.TokensAfter, b.Hard)
		}
	}
}

func TestBudgetScalesDownForSmallWindows(t *testing.T) {
	big := Config{}.BudgetFor(200_000)
	if big.Threshold != 167_000 {
		t.Errorf("200k window: threshold %d, want 167000 (20k reserve, 13k buffer)", big.Threshold)
	}
	small := Config{}.BudgetFor(32_000)
	if small.Threshold != 32_000-4_000-3_200 || small.Target >= small.Threshold || small.Hard > 32_000 {
		t.Errorf("32k window: %+v", small)
	}
}

func TestSizesInProviderErrors(t *testing.T) {
	for msg, want := range map[string][2]int{
		"prompt is too long: 208310 tokens > 200000 maximum":                                                                                              {208310, 200000},
		"The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).":                                                         {1196265, 1048576},
		"This model's maximum context length is 32768 tokens. However, your messages resulted in 40000 tokens. Please reduce the length of the messages.": {40000, 32768},
		"Your input exceeds the context window of this model. Please adjust your input and try again.":                                                    {0, 0},
	} {
		if tok, win := SizesInError(msg); tok != want[0] || win != want[1] {
			t.Errorf("SizesInError(%q) = %d, %d; want %v", msg, tok, win, want)
		}
	}
}

func TestEstimatorCalibratesOnReportedUsage(t *testing.T) {
	var e Estimator
	if got := e.Estimate(4000); got != 1000 {
		t.Fatalf("uncalibrated estimate %d, want 1000 (4 characters a token)", got)
	}
	e.Observe(4000, 1500) // the provider counts 1.5x our heuristic
	if got := e.Estimate(8000); got != 1500+1500 {
		t.Fatalf("estimate after calibration %d, want 3000 (reported 1500 + 4000 characters at 1.5x)", got)
	}
	e.Reset()
	if got := e.Estimate(8000); got != 3000 {
		t.Fatalf("estimate after a compaction %d, want 3000", got)
	}
}
