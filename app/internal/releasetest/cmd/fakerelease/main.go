// Command fakerelease serves the files of a folder as the assets of one
// GitHub release on 127.0.0.1 (see releasetest), for the desktop smoke test's
// self-update run: fakerelease -repo acme/longhaul -tag v2.0.0 -dir DIR.
// It prints the API base URL, then serves until killed.
package main

import (
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"longhaul/app/internal/releasetest"
)

func main() {
	repo := flag.String("repo", "acme/longhaul", "owner/name")
	tag := flag.String("tag", "v2.0.0", "release tag")
	dir := flag.String("dir", ".", "folder whose files are the assets")
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	owner, name, ok := strings.Cut(*repo, "/")
	if !ok {
		log.Fatalf("-repo %q: want owner/name", *repo)
	}
	entries, err := os.ReadDir(*dir)
	if err != nil {
		log.Fatal(err)
	}
	srv := &releasetest.Server{Owner: owner, Repo: name}
	var assets []releasetest.Asset
	for _, e := range entries {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(*dir, e.Name()))
			if err != nil {
				log.Fatal(err)
			}
			assets = append(assets, releasetest.Asset{Name: e.Name(), Data: b})
		}
	}
	srv.Publish(*tag, assets...)
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s/api/v3/\n", ln.Addr())
	log.Fatal(http.Serve(ln, srv))
}
