package openai

import (
	"bytes"
	"errors"
	"strings"

	"longhaul/proxy/anthropic"
)

// Content parts of Chat messages (text, images, files) as Messages blocks.

// chatPartToAnthropic translates a content part; nil for an empty text
// (Messages refuses empty text blocks). Assistant parts are text or refusal.
func chatPartToAnthropic(p *chatFields, field string, index int, assistant bool) (responsesBlock, error) {
	param := responsesParam{"", field, index}
	typ := responsesName(p.Type)
	if assistant && string(typ) != "text" && string(typ) != "refusal" {
		return nil, responsesBadRequest(param.String()+".type", "Assistant content parts must be of type 'text' or 'refusal', not '%s'.", typ)
	}
	switch string(typ) {
	case "text", "refusal":
		txt := p.Text
		if string(typ) == "refusal" {
			txt = p.Refusal
		}
		if !isJSONString(txt) {
			return nil, responsesBadRequest(param.String()+"."+string(typ), "Missing required parameter: '%s'.", typ)
		}
		if isEmptyJSONString(txt) {
			return nil, nil
		}
		return responsesTextBlock(txt), nil
	case "image_url":
		u := p.ImageURL
		if len(u) > 0 && u[0] == '{' {
			u = anthropic.MemberValue(u, "url")
		}
		source, ok := chatImageSource(u)
		if !ok {
			return nil, responsesBadRequest(param.String()+".image_url.url", "Invalid 'image_url.url': expected an http(s) URL or a base64 data URL.")
		}
		return responsesBlock{[]byte(`{"type":"image","source":`), source, responsesClosingBrace}, nil
	case "file":
		f, err := parseChatFields(p.File)
		if err != nil {
			return nil, responsesBadRequest(param.String()+".file", "Missing required parameter: 'file'.")
		}
		mt, data, ok := chatSplitDataURL(f.FileData)
		if !ok || mt != "application/pdf" {
			return nil, responsesBadRequest(param.String()+".file.file_data", "Only PDF files given as a base64 data URL (data:application/pdf;base64,…) in 'file_data' can be sent to this upstream; file_id needs OpenAI's file storage.")
		}
		b := responsesBlock{[]byte(`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":`), data, []byte("}")}
		if isJSONString(f.Filename) {
			b = append(b, []byte(`,"title":`), f.Filename)
		}
		return append(b, responsesClosingBrace), nil
	case "input_audio":
		return nil, responsesBadRequest(param.String()+".type", "Audio input cannot be sent to this upstream.")
	default:
		return nil, responsesBadRequest(param.String()+".type", "Content parts of type '%s' are not supported by this upstream.", typ)
	}
}

// chatImageSource turns an image URL (a raw JSON string) into a Messages
// image source: a data URL into base64 data, an http(s) URL into a url.
func chatImageSource(u []byte) ([]byte, bool) {
	if mt, data, ok := chatSplitDataURL(u); ok {
		b := make([]byte, 0, len(data)+len(mt)+48)
		b = append(b, `{"type":"base64","media_type":`...)
		b = append(b, anthropic.Quote(mt)...)
		b = append(b, `,"data":`...)
		b = append(b, data...)
		return append(b, '}'), true
	}
	if !isJSONString(u) {
		return nil, false
	}
	if s := anthropic.Unquote(u); strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") {
		b := make([]byte, 0, len(u)+24)
		b = append(b, `{"type":"url","url":`...)
		b = append(b, u...)
		return append(b, '}'), true
	}
	return nil, false
}

// chatSplitDataURL splits a raw JSON string holding "data:<media
// type>;base64,<data>" without decoding the data: the data comes back as a
// raw JSON string of its own (base64 needs no escapes, and whatever escapes
// a client used stay valid JSON).
func chatSplitDataURL(raw []byte) (mediaType string, data []byte, ok bool) {
	if !isJSONString(raw) || !bytes.HasPrefix(raw, []byte(`"data:`)) {
		return "", nil, false
	}
	in := raw[1 : len(raw)-1]
	head := in[:min(len(in), 256)]
	comma := bytes.IndexByte(head, ',')
	if comma < 0 {
		return "", nil, false
	}
	meta := string(head[len("data:"):comma])
	if strings.Contains(meta, `\`) {
		return "", nil, false
	}
	mediaType, found := strings.CutSuffix(meta, ";base64")
	if !found || mediaType == "" {
		return "", nil, false
	}
	data = make([]byte, 0, len(in)-comma+1)
	data = append(data, '"')
	data = append(data, in[comma+1:]...)
	return mediaType, append(data, '"'), true
}

// chatPartsError turns a malformed array into a 400 naming it; a refusal of
// one element passes through.
func chatPartsError(err error, param string) error {
	if err == nil {
		return nil
	}
	var re *ChatRequestError
	if errors.As(err, &re) {
		return re
	}
	field := param[strings.LastIndexByte(param, '.')+1:]
	return responsesBadRequest(param, "Invalid '%s': expected a string or an array of objects.", field)
}
