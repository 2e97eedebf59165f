// Package compact keeps long sessions inside the model's context window: it
// estimates pressure (with calibration against real usage), shrinks tool
// results, repairs thinking-signature chains, and compacts history in layers
// — trim old tool rounds, elide old thinking, summarise as a last resort.
//
// Its input is the Anthropic Messages shape, read and rewritten through
// proxy/anthropic's types, and it stays that shape when OpenAI and Gemini
// routes arrive: those translate a request into Messages to compact it (and
// the result back), rather than the engine growing a protocol-neutral type.
// One engine, one input shape: copies of compaction per protocol drift
// apart, and a neutral type would be a fourth wire format to keep in step,
// while the Messages types already carry what compaction needs (tool
// rounds, signed thinking, cache_control) and keep the rest as raw bytes.
//
// Every rewrite works on spans of the client's bytes: what is not edited is
// re-emitted exactly, and a request that needs nothing is returned as the
// very same slice.
package compact
