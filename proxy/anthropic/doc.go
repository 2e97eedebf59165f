// Package anthropic is the one home of the Anthropic Messages API wire
// format in Longhaul: the JSON scanner and the peek the hot path runs on
// every request, the request, message and block types the compaction engine
// rewrites, the session id, the facts read off a reply as it passes (usage,
// signatures, tool_use ids, stop reason), the reassembly of a streamed reply, the error
// bodies, and the builder of every request sent upstream.
//
// The client's bytes are the source of truth. Nothing here decodes a whole
// request: the peek reads a few top-level fields while the body arrives, and
// the types hold spans of the client's bytes, so fields this package does not
// know (cache_control, citations, documents, server tools, future block
// types) ride along untouched and an unedited request encodes to the very
// same slice.
//
// proxy/openai and proxy/gemini are meant to sit beside this package, each
// the single home of its own wire format.
package anthropic
