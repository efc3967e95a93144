// Package atomicfile writes files so that nothing is lost: a reader (or the
// next run) sees either the file's old content or the whole new content,
// never a part of it. The content goes to a temporary file in the target's
// folder, which is synced and then renamed over the target; a failed write
// (a full disk, an I/O error) removes the temporary file and leaves the
// target as it was.
//
// It is the one way tcpmap writes an output file (`plan --out`, `emit
// --out`, `cost --trace`, `regress --update`, model/plan.Plan.Write). It
// lives in internal/ because it has one job that is no part of the
// vocabulary (model), of the stored results (results) or of the CLI (cmd),
// and each of them needs it: model/plan may import nothing above model, so
// the helper has to sit below every package that writes.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// file is the part of *os.File a write uses; tests replace createTemp to
// fake a failing disk.
type file interface {
	io.Writer
	Name() string
	Sync() error
	Chmod(os.FileMode) error
	Close() error
}

// createTemp creates the temporary file; a variable so that tests can make
// its writes fail.
var createTemp = func(dir, pattern string) (file, error) { return os.CreateTemp(dir, pattern) }

// WriteFile writes data to path atomically with permissions perm (see the
// package doc). On error path keeps its old content, or stays absent.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write is WriteFile for content produced by a function: write writes the
// whole content to w. If write returns an error, or writing, syncing or
// renaming fails, the temporary file is removed and path is untouched.
func Write(path string, perm os.FileMode, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := createTemp(dir, "."+base+".tmp*")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return err // *os.LinkError names both paths
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable where the system allows it; a
// failure is not an error of the write (the new content is in place).
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}

// Check reports whether path can be written before any work goes into its
// content: its folder exists and accepts a new file, and path itself is not
// a folder. It leaves nothing behind.
func Check(path string) error {
	if path == "" {
		return errors.New("empty output path")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s: is a directory, want a file", path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: cannot write: %w", path, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: cannot write: %s is not a directory", path, dir)
	}
	f, err := os.CreateTemp(dir, "."+base+".check*")
	if err != nil {
		return fmt.Errorf("%s: cannot write: %w", path, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
