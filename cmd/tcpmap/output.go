package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"tcpmap/internal/atomicfile"
)

// Output files. Every file a command writes (plan --out, emit --out, cost
// --trace, regress --update) goes through writeFile: a temporary file in
// the same folder, synced, then renamed over the target, so that a failed
// write (a full disk) leaves the old file whole. Each command checks its
// outputs with checkOutput or checkOutDir before it does the work whose
// result they hold.

// writeFile writes an output file atomically; tests replace it to fake a
// failing disk.
var writeFile = atomicfile.WriteFile

// checkOutput reports whether the file path can be written (its folder
// exists and accepts files; path is not a folder), naming the flag.
func checkOutput(flag, path string) error {
	if err := atomicfile.Check(path); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return nil
}

// checkOutDir reports whether dir can hold output files: an existing
// folder that accepts files, or a path MkdirAll can create (its nearest
// existing ancestor is a folder).
func checkOutDir(flag, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s %s: not a directory", flag, dir)
	case err == nil:
		return checkOutput(flag, filepath.Join(dir, ".tcpmap"))
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: %w", flag, err)
	}
	for p := filepath.Dir(filepath.Clean(dir)); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s %s: %s is not a directory", flag, dir, p)
			}
			return nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", flag, err)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// checkInputDir reports whether dir is an existing folder, naming the flag.
func checkInputDir(flag, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s: not a directory", flag, dir)
	}
	return nil
}
