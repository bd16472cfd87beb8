package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImports: the command line is a thin shell over package action. Its
// files import none of the packages that do the work (they are action's),
// and none of them runs the fleet loop itself.
func TestImports(t *testing.T) {
	forbidden := []string{"pidb/remote", "pidb/engine", "pidb/facts", "pidb/thermal", "pidb/provision", "pidb/tune", "pidb/fleet", "pidb/results", "pidb/bench"}
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files here: %v", err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: what it does belongs in package action", name, path)
				}
			}
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "fleet.Run") {
			t.Errorf("%s runs the fleet loop itself: that is action's", name)
		}
	}
}
