package openai

import (
	"errors"
	"fmt"

	"longhaul/proxy/anthropic"
)

// The raw-field reader of Chat Completions objects: messages, content parts, tool calls, tools.

// chatFields holds the raw values of the members a message, a content part,
// a tool call or a tool may have: nil when absent.
type chatFields struct {
	Type, Role, Content, Name, ToolCalls, ToolCallID, ReasoningContent []byte
	ThinkingBlocks, Refusal, FunctionCall, Text, ImageURL, InputAudio  []byte
	File, ID, Function, Arguments, Description, Parameters, URL        []byte
	FileData, FileID, Filename, Thinking, Signature, Data, Index       []byte
	MediaType                                                          []byte
}

func (f *chatFields) set(k, v []byte) {
	switch string(k) {
	case "type":
		f.Type = v
	case "role":
		f.Role = v
	case "content":
		f.Content = v
	case "name":
		f.Name = v
	case "tool_calls":
		f.ToolCalls = v
	case "tool_call_id":
		f.ToolCallID = v
	case "reasoning_content":
		f.ReasoningContent = v
	case "thinking_blocks":
		f.ThinkingBlocks = v
	case "refusal":
		f.Refusal = v
	case "function_call":
		f.FunctionCall = v
	case "text":
		f.Text = v
	case "image_url":
		f.ImageURL = v
	case "input_audio":
		f.InputAudio = v
	case "file":
		f.File = v
	case "id":
		f.ID = v
	case "function":
		f.Function = v
	case "arguments":
		f.Arguments = v
	case "description":
		f.Description = v
	case "parameters":
		f.Parameters = v
	case "url":
		f.URL = v
	case "file_data":
		f.FileData = v
	case "file_id":
		f.FileID = v
	case "filename":
		f.Filename = v
	case "thinking":
		f.Thinking = v
	case "signature":
		f.Signature = v
	case "data":
		f.Data = v
	case "index":
		f.Index = v
	case "media_type":
		f.MediaType = v
	}
}

func parseChatFields(obj []byte) (chatFields, error) {
	var f chatFields
	if len(obj) == 0 || obj[0] != '{' {
		return f, errors.New("expected an object")
	}
	err := anthropic.EachMember(obj, func(k, v []byte) error {
		f.set(k, v)
		return nil
	})
	return f, err
}

// chatEachElement reads a JSON array of objects in one pass, calling fn with
// each element's raw bytes and members. A malformed array is a plain error;
// fn's errors are returned as they are. f is the same for every element, cleared
// before each: fn must not keep it (its fields, slices of arr, it may). Fields of
// every member a Chat object may have are 744 bytes, and a fresh one per element
// went to the heap: 69 MB for 100k messages.
func chatEachElement(arr []byte, fn func(i int, raw []byte, f *chatFields) error) error {
	if len(arr) == 0 || arr[0] != '[' {
		return errors.New("expected an array")
	}
	n := 0
	var f chatFields
	_, err := anthropic.WalkArray(arr, 0, func(vi int) (int, error) {
		if vi >= len(arr) || arr[vi] != '{' {
			return 0, fmt.Errorf("expected an object at byte %d", vi)
		}
		f = chatFields{}
		end, err := anthropic.WalkObject(arr, vi, func(k []byte, ki int) (int, error) {
			ve, err := anthropic.SkipValue(arr, ki)
			if err != nil {
				return 0, err
			}
			f.set(k[1:len(k)-1], arr[ki:ve])
			return ve, nil
		})
		if err != nil {
			return 0, err
		}
		if err := fn(n, arr[vi:end], &f); err != nil {
			return 0, err
		}
		n++
		return end, nil
	})
	return err
}

// chatReasoningSignature marks a thinking block that carries a Chat
// upstream's reasoning_content (DeepSeek style) through the Messages shape:
// the text is the reasoning, there is nothing to sign. Such a block belongs
// to the OpenAI family and goes back only to a Chat upstream
// (ChatIsReasoningSignature lets the proxy check).
const chatReasoningSignature = "openai-chat-reasoning:"
