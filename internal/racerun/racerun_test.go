package racerun

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{`^(TestA|TestB)$`, []string{"TestA", "TestB"}},
		{`^(TestA)$`, []string{"TestA"}},
		{`TestA|TestB`, nil},
		{`^()$`, nil},
		{`^(TestA|TestB)`, nil},
	} {
		got, err := Names(c.pattern)
		if c.want == nil {
			assert.Error(t, err, c.pattern)
			continue
		}
		require.NoError(t, err, c.pattern)
		assert.Equal(t, c.want, got)
	}
}

func TestUndeclared(t *testing.T) {
	dir := t.TempDir()
	src := "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n\nfunc TestB(t *testing.T) {}\n\nfunc helper(t *testing.T) {}\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a_test.go"), []byte(src), 0o644))
	// A declaration in a file that is not a test file does not count.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.go"), []byte("package p\n\nimport \"testing\"\n\nfunc TestC(t *testing.T) {}\n"), 0o644))
	missing, err := Undeclared(`^(TestA|TestB)$`, dir)
	require.NoError(t, err)
	assert.Empty(t, missing)
	missing, err = Undeclared(`^(TestA|TestC|helper)$`, dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"TestC", "helper"}, missing)
	_, err = Undeclared(`TestA`, dir)
	assert.Error(t, err)
}

func TestSelect(t *testing.T) {
	f := flag.Lookup("test.run")
	require.NotNil(t, f)
	old := f.Value.String()
	t.Cleanup(func() { require.NoError(t, f.Value.Set(old)) })
	require.NoError(t, f.Value.Set(""))
	require.NoError(t, Select(`^(TestA)$`))
	assert.Equal(t, `^(TestA)$`, f.Value.String())
	// A selection on the command line wins.
	require.NoError(t, Select(`^(TestB)$`))
	assert.Equal(t, `^(TestA)$`, f.Value.String())
}
