package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// goPackages maps each package directory of this module (slash-separated, "." for the root) to
// the module-local and Wails imports of its non-test files.
func goPackages(t *testing.T) map[string][]string {
	t.Helper()
	pkgs := map[string][]string{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "frontend" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if _, seen := pkgs[dir]; !seen {
			pkgs[dir] = nil // a package without such imports is still a package
		}
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(ip, "longhaul") || strings.HasPrefix(ip, "github.com/wailsapp/") {
				pkgs[dir] = append(pkgs[dir], ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

func under(dir, root string) bool { return dir == root || strings.HasPrefix(dir, root+"/") }

// The import rules of docs/ARCHITECTURE.md: proxy and store never import each other, the app
// or Wails; nothing outside app/ but main imports app/...; the shell packages under app/ do
// not import app itself (app/door, which serves the App's own operations, is the exception).
func TestImportRules(t *testing.T) {
	for dir, imports := range goPackages(t) {
		for _, ip := range imports {
			target := strings.TrimPrefix(strings.TrimPrefix(ip, "longhaul"), "/")
			var broken string
			switch {
			case under(dir, "proxy") && (under(target, "store") || under(target, "app") || strings.HasPrefix(ip, "github.com/wailsapp/")):
				broken = "proxy must not import the store, the app or Wails"
			case under(dir, "store") && (under(target, "proxy") || under(target, "app") || strings.HasPrefix(ip, "github.com/wailsapp/")):
				broken = "store must not import the proxy, the app or Wails"
			case under(target, "app") && dir != "." && !under(dir, "app"):
				broken = "only main imports app/..."
			case target == "app" && under(dir, "app") && dir != "app" && dir != "app/door":
				broken = "packages under app/ (but app/door) must not import app"
			}
			if broken != "" {
				t.Errorf("%s imports %s: %s", dir, ip, broken)
			}
		}
	}
}

// docs/ARCHITECTURE.md is the map of the packages: each one must be on it, so a new package
// comes with its line.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	for dir := range goPackages(t) {
		if dir == "." || strings.Contains(dir, "/internal/") || strings.HasSuffix(dir, "/internal") || strings.Contains(dir, "/cmd/") {
			continue // main is main.go; internal and cmd belong to their parent
		}
		if !strings.Contains(string(doc), dir+"/") {
			t.Errorf("docs/ARCHITECTURE.md does not mention %s/", dir)
		}
	}
}

// Comments point into this repository, never at documents outside it (an earlier spec was
// cited by section number; a reader of the code cannot follow such a pointer).
// outsideSpec is spelled in two parts so this file does not match itself.
var outsideSpec = "SPEC " + "§"

func TestNoPointersToDocumentsOutsideTheRepository(t *testing.T) {
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "dist" || d.Name() == "bin" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return filepath.SkipDir
		}
		switch path.Ext(p) {
		case ".go", ".ts", ".vue", ".sql", ".md", ".sh":
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), outsideSpec) {
			t.Errorf("%s cites %q, a document outside this repository: say the reason, or point into docs/", p, outsideSpec)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
