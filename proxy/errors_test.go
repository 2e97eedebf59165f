package proxy

import "longhaul/proxy/anthropic"

// The error shape as the tests read it (errorBody) and script it (errorJSON).
type errorBody = anthropic.ErrorBody

func errorJSON(typ, msg string) []byte { return anthropic.ErrorJSON(typ, msg) }
