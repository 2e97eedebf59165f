// Package gemini is the one home of the Gemini API's wire format in Longhaul
// (generativelanguage v1beta: generateContent, streamGenerateContent in both
// stream forms, countTokens, models): its types, its errors, the JSON Schema
// subset its function declarations accept, and the translation to and from
// the Anthropic Messages shape the rest of the proxy works on.
//
// Every function here is pure: what a translation needs from outside (the
// model named in the URL path, the thought signatures the signature cache
// holds) comes in through RequestOptions and ReplyOptions, and what it
// learns (the signatures a reply carried) goes out through their hooks.
//
// Thought signatures stay in their family. Gemini's thoughtSignature is never
// written into an Anthropic-shaped message: it is reported with a key (the
// tool_use id of the function call it rode on, or TextSignatureKey of a
// text part) so the core can keep it in the signature cache under Family, and
// RequestFromAnthropic asks for it back by the same key. Anthropic thinking
// signatures are never sent to Gemini: thinking blocks are dropped on the
// way there.
package gemini

// Family is the signature-cache family of Gemini's thought signatures.
const Family = "gemini"

// SkipSignatureValidator is the placeholder thoughtSignature the Gemini API
// documents for function calls it did not issue (a history migrated from
// another model, or one whose signature is lost for good): the API then skips
// the signature check for that part instead of answering 400.
const SkipSignatureValidator = "skip_thought_signature_validator"
