package fleet

// The session limits a spend can reach (Limits.Spent).
const (
	SpentNone   = ""
	SpentTokens = "max_tokens"
	SpentCost   = "max_cost_usd"
)

// Spent reports which of l's session limits a session has reached with
// tokens (input plus output) and costUSD: SpentTokens, SpentCost (tokens
// first when both), or SpentNone. The worker stops a session on it after
// each model turn; the dispatcher refuses to reopen a task on it.
func (l Limits) Spent(tokens int64, costUSD float64) string {
	switch {
	case l.MaxTokens > 0 && tokens >= l.MaxTokens:
		return SpentTokens
	case l.MaxCostUSD > 0 && costUSD >= l.MaxCostUSD:
		return SpentCost
	}
	return SpentNone
}
