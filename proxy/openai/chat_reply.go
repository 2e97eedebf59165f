package openai

import "time"

// ChatReplyOptions is what a Chat reply or stream translation needs from
// outside. The zero value is usable.
type ChatReplyOptions struct {
	// Model names the model when the reply names none.
	Model string
	// CompletionID is the id given to a translated Messages reply ("" =
	// "chatcmpl-" + the message id's tail).
	CompletionID string
	// MessageID is the Messages id given to a translated completion ("" =
	// "msg_" + the completion id's tail).
	MessageID string
	// Now stamps created. nil = time.Now.
	Now func() time.Time
	// IncludeUsage ends a translated stream with the usage chunk (choices
	// []), as a Chat client asks with stream_options.include_usage
	// (ChatIncludeUsage).
	IncludeUsage bool
}

func (o ChatReplyOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}
