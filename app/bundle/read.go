package bundle

import (
	"archive/zip"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"longhaul/store"
)

// Bundle is a bundle read back.
type Bundle struct {
	Manifest Manifest
	// Request is request.json: the body as the client sent it (redacted). Forwarded is
	// forwarded.json, nil when the bundle has none (the request went upstream unchanged).
	Request, Forwarded []byte
	// Reply is the reply's file, ReplyFile its name (reply.json, reply.sse or reply.txt); nil
	// and "" when the bundle has none.
	Reply     []byte
	ReplyFile string
	Attempts  []store.Attempt
	Ledger    Ledger
	// Settings is settings.json as written (its shape is store.Settings of the writer's
	// version, which may differ from this one's).
	Settings json.RawMessage
}

// maxFileBytes bounds each file Read inflates: a bundle comes from someone else, and a few
// hundred bytes of zip can inflate to gigabytes. The proxy's own body limit is at most 1 GiB
// (proxy.max_body_bytes), and bodies are kept up to history.max_body_bytes, far less.
const maxFileBytes = 1 << 30

// ErrNotBundle is returned (wrapped) for a zip that is not a repro bundle, or of a newer format.
var ErrNotBundle = errors.New("not a Longhaul repro bundle")

// Read reads a bundle from a zip of size bytes.
func Read(r io.ReaderAt, size int64) (Bundle, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return Bundle{}, fmt.Errorf("read bundle: %w", err)
	}
	files := map[string][]byte{}
	for _, f := range zr.File {
		if _, dup := files[f.Name]; dup {
			return Bundle{}, fmt.Errorf("read bundle: %s appears twice: %w", f.Name, ErrNotBundle)
		}
		b, err := readFile(f)
		if err != nil {
			return Bundle{}, fmt.Errorf("read bundle: %s: %w", f.Name, err)
		}
		files[f.Name] = b
	}
	var bd Bundle
	m, ok := files[ManifestFile]
	if !ok {
		return Bundle{}, fmt.Errorf("read bundle: no %s: %w", ManifestFile, ErrNotBundle)
	}
	if err := json.Unmarshal(m, &bd.Manifest); err != nil {
		return Bundle{}, fmt.Errorf("read bundle: %s: %w", ManifestFile, err)
	}
	if bd.Manifest.Kind != Kind {
		return Bundle{}, fmt.Errorf("read bundle: %s says kind %q: %w", ManifestFile, bd.Manifest.Kind, ErrNotBundle)
	}
	if bd.Manifest.Format < 1 || bd.Manifest.Format > FormatVersion {
		return Bundle{}, fmt.Errorf("read bundle: format %d (this Longhaul reads up to %d; update it): %w", bd.Manifest.Format, FormatVersion, ErrNotBundle)
	}
	bd.Request, bd.Forwarded = files[RequestFile], files[ForwardedFile]
	for _, name := range []string{ReplyJSONFile, ReplySSEFile, ReplyTextFile} {
		if b, ok := files[name]; ok {
			bd.Reply, bd.ReplyFile = b, name
			break
		}
	}
	for _, j := range []struct {
		name string
		dst  any
	}{{AttemptsFile, &bd.Attempts}, {LedgerFile, &bd.Ledger}, {SettingsFile, &bd.Settings}} {
		b, ok := files[j.name]
		if !ok {
			continue
		}
		if err := json.Unmarshal(b, j.dst); err != nil {
			return Bundle{}, fmt.Errorf("read bundle: %s: %w", j.name, err)
		}
	}
	return bd, nil
}

func readFile(f *zip.File) ([]byte, error) {
	if f.UncompressedSize64 > maxFileBytes {
		return nil, fmt.Errorf("%d bytes is more than a bundle holds", f.UncompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close() //nolint:errcheck // read-only
	// The header's size is the writer's word; the limit holds whatever it says.
	b, err := io.ReadAll(io.LimitReader(rc, maxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("more than %d bytes", maxFileBytes)
	}
	return b, nil
}
