package pricing

import "maps"

// BuiltinDate is when the built-in prices were last checked against the
// providers' published price lists (entries first taken on 2025-11-01;
// GPT-5.1, GPT-5.2, GPT-4o mini, o3 and Gemini 3 added on this date).
const BuiltinDate = "2026-11-27"

// Builtin returns a copy of the built-in price table (USD per million
// tokens, standard tier, prompts under the long-context threshold).
//
// Sources, as published on BuiltinDate:
//   - Anthropic: the pricing page of the Claude API documentation. Cache
//     write is the five-minute cache (1.25 × input), cache read 0.1 × input.
//   - OpenAI: the API pricing page; "cached input" is the cache-read price.
//     OpenAI charges nothing extra to write its cache: write = input.
//   - Google: the Gemini API pricing page; implicit caching reads at the
//     context-caching price and writes at the input price (storage is not
//     charged for implicit caches).
//   - Amazon Bedrock and Google Vertex AI list Anthropic's and Google's
//     models at the providers' own prices on their global endpoints;
//     their model ids (anthropic.claude-...-v1:0, the cross-region
//     inference profiles us./eu./apac./jp./au./global.anthropic.claude-...,
//     claude-...@date) are looked up as the provider's own (see Lookup).
//     Bedrock's geographic profiles (us., eu., apac., ...) and in-region
//     ids of Claude Sonnet 4.5 and later, and Vertex's regional endpoints,
//     charge about 10% more, which the table does not carry: override
//     those model ids (prices.<id>) when you use them.
func Builtin() Table {
	t := make(Table, len(builtin))
	maps.Copy(t, builtin)
	return t
}

var builtin = Table{
	// Anthropic
	"claude-opus-4-5":   {InputPerMTok: 5, OutputPerMTok: 25, CacheReadPerMTok: 0.50, CacheWritePerMTok: 6.25},
	"claude-opus-4-1":   {InputPerMTok: 15, OutputPerMTok: 75, CacheReadPerMTok: 1.50, CacheWritePerMTok: 18.75},
	"claude-opus-4":     {InputPerMTok: 15, OutputPerMTok: 75, CacheReadPerMTok: 1.50, CacheWritePerMTok: 18.75},
	"claude-sonnet-4-5": {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75},
	"claude-sonnet-4":   {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75},
	"claude-3-7-sonnet": {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75},
	"claude-haiku-4-5":  {InputPerMTok: 1, OutputPerMTok: 5, CacheReadPerMTok: 0.10, CacheWritePerMTok: 1.25},
	"claude-3-5-haiku":  {InputPerMTok: 0.80, OutputPerMTok: 4, CacheReadPerMTok: 0.08, CacheWritePerMTok: 1},
	// Older models still served on Bedrock (anthropic.claude-3-5-sonnet-
	// 20241022-v2:0, anthropic.claude-3-haiku-20240307-v1:0, ...).
	"claude-3-5-sonnet": {InputPerMTok: 3, OutputPerMTok: 15, CacheReadPerMTok: 0.30, CacheWritePerMTok: 3.75},
	"claude-3-haiku":    {InputPerMTok: 0.25, OutputPerMTok: 1.25, CacheReadPerMTok: 0.03, CacheWritePerMTok: 0.30},
	"claude-3-opus":     {InputPerMTok: 15, OutputPerMTok: 75, CacheReadPerMTok: 1.50, CacheWritePerMTok: 18.75},

	// OpenAI
	"gpt-5":              {InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerMTok: 0.125, CacheWritePerMTok: 1.25},
	"gpt-5-codex":        {InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerMTok: 0.125, CacheWritePerMTok: 1.25},
	"gpt-5-mini":         {InputPerMTok: 0.25, OutputPerMTok: 2, CacheReadPerMTok: 0.025, CacheWritePerMTok: 0.25},
	"gpt-5-nano":         {InputPerMTok: 0.05, OutputPerMTok: 0.40, CacheReadPerMTok: 0.005, CacheWritePerMTok: 0.05},
	"gpt-4.1":            {InputPerMTok: 2, OutputPerMTok: 8, CacheReadPerMTok: 0.50, CacheWritePerMTok: 2},
	"gpt-4.1-mini":       {InputPerMTok: 0.40, OutputPerMTok: 1.60, CacheReadPerMTok: 0.10, CacheWritePerMTok: 0.40},
	"gpt-4o":             {InputPerMTok: 2.50, OutputPerMTok: 10, CacheReadPerMTok: 1.25, CacheWritePerMTok: 2.50},
	"o4-mini":            {InputPerMTok: 1.10, OutputPerMTok: 4.40, CacheReadPerMTok: 0.275, CacheWritePerMTok: 1.10},
	"o3":                 {InputPerMTok: 2, OutputPerMTok: 8, CacheReadPerMTok: 0.50, CacheWritePerMTok: 2},
	"gpt-4o-mini":        {InputPerMTok: 0.15, OutputPerMTok: 0.60, CacheReadPerMTok: 0.075, CacheWritePerMTok: 0.15},
	"gpt-5.1":            {InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerMTok: 0.125, CacheWritePerMTok: 1.25},
	"gpt-5.1-codex-mini": {InputPerMTok: 0.25, OutputPerMTok: 2, CacheReadPerMTok: 0.025, CacheWritePerMTok: 0.25},
	"gpt-5.2":            {InputPerMTok: 1.75, OutputPerMTok: 14, CacheReadPerMTok: 0.175, CacheWritePerMTok: 1.75},
	"gpt-5.2-codex":      {InputPerMTok: 1.75, OutputPerMTok: 14, CacheReadPerMTok: 0.175, CacheWritePerMTok: 1.75},

	// Google
	"gemini-2.5-pro":        {InputPerMTok: 1.25, OutputPerMTok: 10, CacheReadPerMTok: 0.125, CacheWritePerMTok: 1.25},
	"gemini-2.5-flash":      {InputPerMTok: 0.30, OutputPerMTok: 2.50, CacheReadPerMTok: 0.03, CacheWritePerMTok: 0.30},
	"gemini-2.5-flash-lite": {InputPerMTok: 0.10, OutputPerMTok: 0.40, CacheReadPerMTok: 0.01, CacheWritePerMTok: 0.10},
	// Gemini 3 previews: prompts up to 200k tokens.
	"gemini-3-pro-preview":   {InputPerMTok: 2, OutputPerMTok: 12, CacheReadPerMTok: 0.20, CacheWritePerMTok: 2},
	"gemini-3-flash-preview": {InputPerMTok: 0.50, OutputPerMTok: 3, CacheReadPerMTok: 0.05, CacheWritePerMTok: 0.50},
}
