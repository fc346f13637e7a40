// SPDX-License-Identifier: LGPL-2.1 OR MIT

// publish: put one version of the Go module twheel.dev/twheel into a
// module proxy directory, laid out as the GOPROXY protocol serves it
// (MODULE/@v/list, VERSION.info, VERSION.mod, VERSION.zip), so that
// GOPROXY=file://DIR serves it to `go get` like any proxy. The zip is made
// by golang.org/x/mod/zip, which checks every path and size rule the go
// command applies. It holds the module's files (nested modules, out/ and
// dot files left out) and the licence texts of its SPDX line, from the
// tree's LICENSES/, as LICENSES/NAME.
//
//	go run . -src .. -licenses L1,L2 -version v1.0.0 -proxy DIR
//
// A version already in the proxy is replaced: the directory is a build
// product, rebuilt by `make proxy`; a real proxy's versions never change.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/zip"
)

// file is one file of the module zip, read from a path on disk.
type file struct{ name, disk string }

func (f file) Path() string                 { return f.name }
func (f file) Lstat() (fs.FileInfo, error)  { return os.Lstat(f.disk) }
func (f file) Open() (io.ReadCloser, error) { return os.Open(f.disk) }

func die(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "publish: "+format+"\n", args...)
	os.Exit(1)
}

// moduleFiles lists the files of the module rooted at @src.
func moduleFiles(src string) []zip.File {
	var files []zip.File
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		name := d.Name()
		if rel != "." && (strings.HasPrefix(name, ".") || (d.IsDir() && rel == "out")) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); rel != "." && err == nil {
				return filepath.SkipDir // a module of its own
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, file{filepath.ToSlash(rel), path})
		}
		return nil
	})
	if err != nil {
		die("%v", err)
	}
	return files
}

func main() {
	src := flag.String("src", "..", "the module's directory")
	licenses := flag.String("licenses", "", "licence texts to add as LICENSES/NAME, comma-separated")
	version := flag.String("version", "", "the version to publish, vX.Y.Z")
	proxy := flag.String("proxy", "", "the proxy directory")
	flag.Parse()
	if !semver.IsValid(*version) || semver.Canonical(*version) != *version || *proxy == "" {
		die("need -version vX.Y.Z and -proxy DIR")
	}
	gomod, err := os.ReadFile(filepath.Join(*src, "go.mod"))
	if err != nil {
		die("%v", err)
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		die("%s/go.mod names no module", *src)
	}
	files := moduleFiles(*src)
	if *licenses != "" {
		for _, l := range strings.Split(*licenses, ",") {
			files = append(files, file{"LICENSES/" + filepath.Base(l), l})
		}
	}
	slices.SortFunc(files, func(a, b zip.File) int { return strings.Compare(a.Path(), b.Path()) })

	escaped, err := module.EscapePath(path)
	if err != nil {
		die("%v", err)
	}
	dir := filepath.Join(*proxy, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		die("%v", err)
	}
	zf, err := os.Create(filepath.Join(dir, *version+".zip"))
	if err != nil {
		die("%v", err)
	}
	if err := zip.Create(zf, module.Version{Path: path, Version: *version}, files); err != nil {
		die("zip: %v", err)
	}
	if err := zf.Close(); err != nil {
		die("%v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, *version+".mod"), gomod, 0o644); err != nil {
		die("%v", err)
	}
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{*version, time.Now().UTC().Truncate(time.Second)})
	if err := os.WriteFile(filepath.Join(dir, *version+".info"), info, 0o644); err != nil {
		die("%v", err)
	}
	// The list: every version with a zip, one a line.
	zips, _ := filepath.Glob(filepath.Join(dir, "*.zip"))
	var list []string
	for _, z := range zips {
		list = append(list, strings.TrimSuffix(filepath.Base(z), ".zip"))
	}
	semver.Sort(list)
	if err := os.WriteFile(filepath.Join(dir, "list"), []byte(strings.Join(list, "\n")+"\n"), 0o644); err != nil {
		die("%v", err)
	}
	fmt.Printf("publish: %s@%s (%d files) in %s\n", path, *version, len(files), *proxy)
}
