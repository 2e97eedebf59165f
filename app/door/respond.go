package door

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"longhaul/app"
	"longhaul/app/update"
	"longhaul/store"
)

// handle adapts an operation to a route: its value is written as JSON, its error as the
// door's error.
func handle(op func(r *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, err := op(r)
		reply(w, v, err)
	})
}

// reply writes v as JSON with 200, or err as writeError does.
func reply(w http.ResponseWriter, v any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// writeError is the door's one error writer: {"error": {"message": "…"}} with the status
// statusOf gives err, plus "fields" ([{"field", "message"}]) for validation errors, so the UI
// shows each message on its field.
func writeError(w http.ResponseWriter, err error) {
	body := map[string]any{"message": err.Error()}
	var fe app.FieldErrors
	if errors.As(err, &fe) {
		body["fields"] = fe
	}
	writeJSON(w, statusOf(err), map[string]any{"error": body})
}

// statusOf maps an error to its HTTP status: the one a route chose (withStatus), else by kind.
func statusOf(err error) int {
	var se *statusError
	var fe app.FieldErrors
	switch {
	case errors.As(err, &se):
		return se.status
	case errors.As(err, &fe), errors.Is(err, app.ErrBadQuery), errors.Is(err, app.ErrNotReplayable):
		return http.StatusBadRequest
	case errors.Is(err, store.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, update.ErrOff):
		return http.StatusConflict
	case errors.Is(err, app.ErrNoHistory):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// statusError is an error with the HTTP status a route answers it with.
type statusError struct {
	status int
	err    error
}

func (e *statusError) Error() string { return e.err.Error() }
func (e *statusError) Unwrap() error { return e.err }

// withStatus gives err the status a route answers it with; nil stays nil.
func withStatus(status int, err error) error {
	if err == nil {
		return nil
	}
	return &statusError{status, err}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client is gone
}

// decodeBody reads a JSON body into v (numbers kept exact). State-changing requests must be
// JSON, which plain HTML forms cannot send; an empty body leaves v as it is.
func decodeBody(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
		return withStatus(http.StatusUnsupportedMediaType, errors.New("send JSON (Content-Type: application/json)"))
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil && !errors.Is(err, io.EOF) {
		return withStatus(http.StatusBadRequest, errors.New("malformed JSON body: "+err.Error()))
	}
	return nil
}

// query is the request's query as the facades take it: the first value of each parameter.
func query(r *http.Request) map[string]string {
	q := map[string]string{}
	for k, v := range r.URL.Query() {
		if len(v) > 0 && v[0] != "" {
			q[k] = v[0]
		}
	}
	return q
}
