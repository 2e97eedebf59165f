package door

import (
	"net/http"
	"time"

	"longhaul/app/recorder"
)

// keepAliveEvery is how often an idle event stream gets a comment line, so proxies and
// browsers do not time it out.
const keepAliveEvery = 15 * time.Second

// stream is the door's one Server-Sent Events writer: it writes the feed's events until the
// client leaves or falls behind (EventSource then reconnects, and the feed starts it current
// again). name maps a feed event to its SSE event name; false leaves the event out.
func stream(w http.ResponseWriter, r *http.Request, feed *recorder.Feed, name func(string) (string, bool)) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	events, unsubscribe := feed.Subscribe()
	defer unsubscribe()
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	for {
		var chunk []byte
		select {
		case <-r.Context().Done():
			return
		case <-keepAlive.C:
			chunk = []byte(": keep-alive\n\n")
		case e, ok := <-events:
			if !ok {
				return
			}
			sse, ok := name(e.Name)
			if !ok {
				continue
			}
			chunk = append(append(append(append([]byte("event: "), sse...), "\ndata: "...), e.Data...), "\n\n"...)
		}
		if _, err := w.Write(chunk); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}
