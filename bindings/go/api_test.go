// SPDX-License-Identifier: LGPL-2.1 OR MIT

// The API is the same on every system: the exported declarations of the
// Linux build and of the builds for other systems (unsupported.go in
// place of the Linux files) are the same, each type with the same
// exported fields, each function and method with the same signature.
// `make cross` checks that those builds compile; this checks that they
// are the same package. It reads the source, so it skips where there is
// none (the test binary in the VM).

package twheel

import (
	"bytes"
	"go/ast"
	"go/build"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exportedAPI lists the exported declarations of the package as built for
// @goos/@goarch: "func (*Wheel) Add" -> "(uint64, time.Duration) (Result, error)".
func exportedAPI(t *testing.T, goos, goarch string) (api map[string]string, files []string) {
	t.Helper()
	ctx := build.Default
	ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = goos, goarch, false
	pkg, err := ctx.ImportDir(".", 0)
	if err != nil || pkg.Name != "twheel" {
		t.Skipf("no source of the package here: %v", err)
	}
	fset := token.NewFileSet()
	str := func(n ast.Node) string {
		var b bytes.Buffer
		printer.Fprint(&b, fset, n)
		return b.String()
	}
	types := func(fl *ast.FieldList) string {
		var s []string
		for _, f := range fl.List {
			for range max(len(f.Names), 1) {
				s = append(s, str(f.Type))
			}
		}
		return "(" + strings.Join(s, ", ") + ")"
	}
	api = map[string]string{}
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				key := "func " + d.Name.Name
				if d.Recv != nil {
					recv := str(d.Recv.List[0].Type)
					if !ast.IsExported(strings.TrimPrefix(recv, "*")) {
						continue
					}
					key = "func (" + recv + ") " + d.Name.Name
				}
				if d.Name.IsExported() {
					results := "()"
					if d.Type.Results != nil {
						results = types(d.Type.Results)
					}
					api[key] = types(d.Type.Params) + " " + results
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if !s.Name.IsExported() {
							continue
						}
						shape := str(s.Type)
						if st, ok := s.Type.(*ast.StructType); ok {
							// Exported fields only: the Wheel's own differ.
							var fields []string
							for _, f := range st.Fields.List {
								for _, n := range f.Names {
									if n.IsExported() {
										fields = append(fields, n.Name+" "+str(f.Type))
									}
								}
							}
							shape = "struct{" + strings.Join(fields, "; ") + "}"
						}
						api["type "+s.Name.Name] = shape
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								typ := ""
								if s.Type != nil {
									typ = str(s.Type)
								}
								api[d.Tok.String()+" "+n.Name] = typ
							}
						}
					}
				}
			}
		}
	}
	return api, files
}

func TestAPIIsTheSameOnEverySystem(t *testing.T) {
	if _, err := os.Stat("unsupported.go"); err != nil {
		t.Skipf("no source of the package here: %v", err)
	}
	linux, _ := exportedAPI(t, "linux", "amd64")
	for _, want := range []string{"func Open", "func (*Wheel) ReadEvents", "func (*Wheel) Touch", "type Error",
		"var ErrUnavailable", "const OpAdd"} {
		if _, ok := linux[want]; !ok {
			t.Fatalf("%s not found in the Linux build: the test reads the source wrong", want)
		}
	}
	for _, sys := range [][2]string{{"darwin", "arm64"}, {"windows", "amd64"}, {"freebsd", "amd64"},
		{"windows", "386"}, {"js", "wasm"}} {
		other, files := exportedAPI(t, sys[0], sys[1])
		if !strings.Contains(strings.Join(files, " "), "unsupported.go") {
			t.Errorf("%s/%s: unsupported.go not built (%v)", sys[0], sys[1], files)
		}
		for k, v := range linux {
			if o, ok := other[k]; !ok {
				t.Errorf("%s/%s lacks %s %s", sys[0], sys[1], k, v)
			} else if o != v {
				t.Errorf("%s: %s on linux, %s on %s/%s", k, v, o, sys[0], sys[1])
			}
		}
		for k, v := range other {
			if _, ok := linux[k]; !ok {
				t.Errorf("%s/%s has %s %s, which linux lacks", sys[0], sys[1], k, v)
			}
		}
	}
}
