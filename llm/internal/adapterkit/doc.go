// Package adapterkit is the request plumbing the llm adapters share and
// that is not part of the public llm API: one Client that encodes a
// request, sends it with llm.Send, and either parses the whole body or
// decodes the event stream, so that every adapter keeps the llm.Client
// contract the same way.
//
// # Contracts
//
//   - Complete reads the whole body; a failed read is an *llm.Error (the
//     guarded body's own error, or ErrStreamInterrupted), and a parse error
//     gets the response's request id.
//   - Stream checks that a 2xx answer is an event stream (anything else is
//     ErrInvalidResponse, never an empty or interrupted stream), runs the
//     wire format's decoder, and puts the response's request id on every
//     error the decoder yields. The decoder must end with exactly one
//     terminal element (EventFinish or an error) unless the consumer stops.
//
// What differs between wire formats (the URL, the headers, the body, the
// decoders) stays in the adapter packages. A Client is safe for concurrent
// use when its functions are.
package adapterkit
