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
// A model's price is found by its exact name, else by the longest table
// key the name starts with followed by '-' (so claude-sonnet-4-5-20250929
// is priced as claude-sonnet-4-5). A model the table does not know costs
// nothing and Lookup says so; the worker logs it once per model.
//
// The built-in prices are list prices in USD as the providers published
// them on the date in BuiltinDate; they change, so operators override
// them in the worker configuration (prices.<model>.*, see
// docs/operations.md).
package pricing
