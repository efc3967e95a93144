package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fullDisk is a temporary file on a disk that fills after room bytes
// (writes fail with ENOSPC), and whose Sync fails when syncErr is set.
type fullDisk struct {
	*os.File
	room    int
	syncErr error
}

func (f *fullDisk) Write(b []byte) (int, error) {
	if len(b) > f.room {
		n, _ := f.File.Write(b[:f.room])
		f.room = 0
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	f.room -= len(b)
	return f.File.Write(b)
}

func (f *fullDisk) Sync() error {
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.File.Sync()
}

// onFullDisk makes the temporary files of the test's writes fullDisks.
func onFullDisk(t *testing.T, room int, syncErr error) {
	t.Helper()
	old := createTemp
	t.Cleanup(func() { createTemp = old })
	createTemp = func(dir, pattern string) (file, error) {
		f, err := os.CreateTemp(dir, pattern)
		if err != nil {
			return nil, err
		}
		return &fullDisk{File: f, room: room, syncErr: syncErr}, nil
	}
}

// entries lists a folder's file names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	require.NoError(t, WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, WriteFile(path, []byte("new content"), 0o640))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "new content", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
	assert.Equal(t, []string{"out.json"}, entries(t, dir), "no temporary file is left")
}

// TestWriteFailureKeepsOldFile: a write that fails part way (a full disk, a
// failed sync, a failing producer) leaves the old file whole and no
// temporary file behind.
func TestWriteFailureKeepsOldFile(t *testing.T) {
	const old = "the checked-in baseline\n"
	big := make([]byte, 1<<16)
	for _, tc := range []struct {
		name    string
		room    int
		syncErr error
		write   func(io.Writer) error
		want    error
	}{
		{name: "disk full", room: 100, want: syscall.ENOSPC},
		{name: "disk full at once", room: 0, want: syscall.ENOSPC},
		{name: "sync fails", room: len(big), syncErr: syscall.EIO, want: syscall.EIO},
		{name: "producer fails", room: len(big), want: io.ErrUnexpectedEOF, write: func(w io.Writer) error {
			w.Write(big[:10])
			return io.ErrUnexpectedEOF
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "baseline.json")
			require.NoError(t, os.WriteFile(path, []byte(old), 0o644))
			onFullDisk(t, tc.room, tc.syncErr)
			write := tc.write
			if write == nil {
				write = func(w io.Writer) error { _, err := w.Write(big); return err }
			}
			err := Write(path, 0o644, write)
			require.Error(t, err)
			assert.True(t, errors.Is(err, tc.want), "%v", err)
			assert.Contains(t, err.Error(), path)
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, old, string(got), "the old file survives")
			assert.Equal(t, []string{"baseline.json"}, entries(t, dir), "no temporary file is left")
		})
	}
}

// TestWriteNewFileFailure: a failed write of a new file leaves no file.
func TestWriteNewFileFailure(t *testing.T) {
	dir := t.TempDir()
	onFullDisk(t, 3, nil)
	err := WriteFile(filepath.Join(dir, "x.plan.json"), []byte("0123456789"), 0o644)
	require.ErrorIs(t, err, syscall.ENOSPC)
	assert.Empty(t, entries(t, dir))
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	for _, tc := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "new.json"), ""},
		{file, ""},
		{"", "empty output path"},
		{dir, "is a directory"},
		{filepath.Join(dir, "nonexistent", "x.plan.json"), "no such file or directory"},
		{filepath.Join(file, "x.json"), "not a directory"},
	} {
		err := Check(tc.path)
		if tc.want == "" {
			assert.NoError(t, err, tc.path)
			continue
		}
		if assert.Error(t, err, tc.path) {
			assert.Contains(t, err.Error(), tc.want)
		}
	}
	assert.Equal(t, []string{"f"}, entries(t, dir), "Check leaves nothing behind")
}

// TestWriteOntoDirectory: a directory is not replaced.
func TestWriteOntoDirectory(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o755))
	require.Error(t, WriteFile(sub, []byte("x"), 0o644))
	fi, err := os.Stat(sub)
	require.NoError(t, err)
	assert.True(t, fi.IsDir())
	assert.Equal(t, []string{"sub"}, entries(t, dir))
}
