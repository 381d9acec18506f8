// Package pricing turns token counts into dollars: a built-in table of
// list prices per model (input, output, cache read, cache write per
// million tokens), an operator's overrides on top of it, and the cost of
// one model call.
//
// # Arithmetic
//
// llm.Usage.InputTokens counts the whole prompt, cached parts included;
// CacheReadTokens and CacheWriteTokens say how much of it was read from or
// written to the provider's prompt cache. So a call costs
//
//	(input - cache_read - cache_write) × input price
//	+ cache_read × cache-read price
//	+ cache_write × cache-write price
//	+ output × output price
//
// per million tokens, where output already includes reasoning tokens (every
// adapter counts thoughts as output, as the providers bill them). A price
// left at zero in an override falls back as documented on Override.
//
// # Lookup
//
// A model's price is found by its exact name, else by its provider's own
// id when the name is a cloud's spelling (Bedrock's
// us.anthropic.claude-sonnet-4-20250514-v1:0, Vertex AI's
// claude-sonnet-4@20250514 or publishers/google/models/gemini-2.5-pro),
// else by the longest table key that id starts with followed by '-' (so
// claude-sonnet-4-5-20250929 is priced as claude-sonnet-4-5).
//
// # Unpriced is not free
//
// A model the table does not know is unpriced: its cost is unknown, which
// Known and Unpriced tell apart from a price of $0 (an operator may price
// a local model at zero). Book.RequirePriced returns an *UnpricedError
// naming the models without a price, for a caller that must refuse work
// whose cost it cannot count (a cost limit, a budget). Book.PriceOf still
// answers a fallback price for them and logs once per model.
//
// # Output limits
//
// MaxOutputTokens is the other half of what a caller must know of a
// model: the most tokens one answer may have, from the providers' model
// documentation (OutputDate), looked up the same way.
//
// The built-in prices are list prices in USD as the providers published
// them on the date in BuiltinDate; they change, so operators override
// them in the worker configuration (prices.<model>.*, see
// docs/operations.md).
package pricing
