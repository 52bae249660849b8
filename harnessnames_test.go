package main

// A harness's name is written once, in its own folder (ARCHITECTURE.md,
// "Adding a harness"): the generic rooms loop over the registries and take
// names from them. In the spirit of Tailscale's TestKeepItSorted, this
// reads the source: a string literal that is a registered harness's name,
// or starts a session id with it ("<name>:…"), may stand only in the
// folder that registers that harness (app/harness/<folder>/…). Test files
// and the test programs under test/ drive real harnesses by name and are
// not held to it.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"tollgate/app/harness"
	"tollgate/app/importer"

	_ "tollgate/app/harness/all"
)

// folderOf is the harness folder (below app/harness/) that defines fn.
func folderOf(t *testing.T, fn any) string {
	t.Helper()
	name := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()).Name()
	rest, ok := strings.CutPrefix(name, mod+"/app/harness/")
	if !ok {
		t.Fatalf("%s is not defined in a harness folder", name)
	}
	folder, _, _ := strings.Cut(rest, "/")
	folder, _, _ = strings.Cut(folder, ".")
	return folder
}

// harnessFolders maps every registered harness name to its folder.
func harnessFolders(t *testing.T) map[string]string {
	owners := map[string]string{}
	add := func(name, folder string) {
		if prev, ok := owners[name]; ok && prev != folder {
			t.Errorf("harness %q is registered from two folders, %s and %s", name, prev, folder)
		}
		owners[name] = folder
	}
	for _, f := range importer.Formats() {
		var fn any = f.NewParser
		if f.Database != nil {
			fn = f.Database.Read
		}
		add(f.Name, folderOf(t, fn))
	}
	for _, in := range harness.Registered() {
		add(in.Name, folderOf(t, in.Status))
	}
	if len(owners) < 6 {
		t.Fatalf("only %d harnesses registered: %v", len(owners), owners)
	}
	return owners
}

func TestHarnessNamesAreWrittenInTheirFolders(t *testing.T) {
	owners := harnessFolders(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch path {
			case "test", "frontend", "node_modules", ".git", "build":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for name, folder := range owners {
				if v != name && !strings.HasPrefix(v, name+":") {
					continue
				}
				if !strings.HasPrefix(filepath.ToSlash(path), "app/harness/"+folder+"/") {
					t.Errorf("%s: %q names harness %s outside its folder app/harness/%s: take it from the registry (importer.Lookup, harness.Registered) or the folder's constant", fset.Position(lit.Pos()), v, name, folder)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
