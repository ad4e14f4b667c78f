package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// corpusStats describes a written corpus.
type corpusStats struct {
	Files int
	Bytes int64
	Go    string // the Go release whose sources these are
}

// goSources lists GOROOT/src's .go files outside testdata and vendor directories, as
// slash paths relative to GOROOT/src, in byte order.
func goSources(goroot string) ([]string, error) {
	src := filepath.Join(goroot, "src")
	var out []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() && strings.HasSuffix(d.Name(), ".go") {
			rel, err := filepath.Rel(src, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

// writeCorpus copies every k-th file of goSources, k the smallest stride that keeps the
// count at or below files, into dir (which must not exist): the same Go release gives the
// same corpus on every machine.
func writeCorpus(goroot, dir string, files int) (corpusStats, error) {
	all, err := goSources(goroot)
	if err != nil {
		return corpusStats{}, err
	}
	if files < 1 || len(all) == 0 {
		return corpusStats{}, fmt.Errorf("no files to select (%d wanted, %d under %s/src)", files, len(all), goroot)
	}
	stride := (len(all) + files - 1) / files
	if err := os.Mkdir(dir, 0o755); err != nil {
		return corpusStats{}, err
	}
	st := corpusStats{Go: runtime.Version()}
	for i := 0; i < len(all); i += stride {
		b, err := os.ReadFile(filepath.Join(goroot, "src", filepath.FromSlash(all[i])))
		if err != nil {
			return st, err
		}
		dst := filepath.Join(dir, filepath.FromSlash(all[i]))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return st, err
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return st, err
		}
		st.Files++
		st.Bytes += int64(len(b))
	}
	return st, nil
}
