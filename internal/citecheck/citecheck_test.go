package citecheck

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoRoot is the directory holding go.mod, two levels up.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "repository root")
	return root
}

// manual loads the seeds from $TCPMAP_SEEDS or ../shared/seeds beside the
// repository, skipping the test when they are absent (a clean clone, as in
// CI, has no manual).
func manual(t *testing.T, root string) *Manual {
	t.Helper()
	dir := os.Getenv("TCPMAP_SEEDS")
	if dir == "" {
		dir = filepath.Join(root, "..", "shared", "seeds")
	}
	m, err := LoadManual(dir)
	if err != nil {
		t.Skipf("the manual is absent, citations not checked: %v (set TCPMAP_SEEDS to the seeds directory)", err)
	}
	return m
}

// TestTreeCitations checks every citation in the tree's comments and in its
// non-test string literals: its lines exist in the seed (every citation),
// and its quoted snippet (comments only), if any, is
// found at the cited lines, within Tolerance (1) line, white space and case
// ignored (see Manual.Check for the rules).
func TestTreeCitations(t *testing.T) {
	root := repoRoot(t)
	m := manual(t, root)
	cites, err := Scan(root)
	require.NoError(t, err)
	quoted, code := 0, 0
	for _, c := range cites {
		switch {
		case len(fragments(c.Quote)) == 0:
		case c.Code:
			code++
		default:
			quoted++
		}
		if err := m.Check(c); err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d citations; %d with a quote in double quotes, %d with code in backquotes", len(cites), quoted, code)
	assert.Greater(t, quoted, 50, "quoted citations found; has the scanner broken?")
}

func TestScanText(t *testing.T) {
	text := ` rule "Type casting requires the data" (002, L1996) and
 002 L1630: "a quote
 over lines"; 002 L4391, L4533-4534 bare, 002 L12 see "not attached";
 (003 L349-351) "x"; "y" (002 L7-L9).`
	got := scanText(text, "f.go", 10)
	want := []Citation{
		{File: "f.go", Line: 10, Seed: "002", Ranges: []Range{{1996, 1996}}, Text: "002, L1996", Quote: "Type casting requires the data"},
		{File: "f.go", Line: 11, Seed: "002", Ranges: []Range{{1630, 1630}}, Text: "002 L1630", Quote: "a quote\n over lines"},
		{File: "f.go", Line: 12, Seed: "002", Ranges: []Range{{4391, 4391}, {4533, 4534}}, Text: "002 L4391, L4533-4534"},
		{File: "f.go", Line: 12, Seed: "002", Ranges: []Range{{12, 12}}, Text: "002 L12"},
		{File: "f.go", Line: 13, Seed: "003", Ranges: []Range{{349, 351}}, Text: "003 L349-351"},
		{File: "f.go", Line: 13, Seed: "002", Ranges: []Range{{7, 9}}, Text: "002 L7-L9", Quote: "y"},
	}
	assert.Equal(t, want, got)
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	lines := "one\nType casting\n  requires the data\nfour\nfive\nsix\nseven\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "002_x.txt"), []byte(lines), 0o644))
	m, err := LoadManual(dir)
	require.NoError(t, err)
	assert.Equal(t, 7, m.Lines("002"))
	cite := func(lo, hi int, q string) Citation {
		return Citation{File: "f.go", Line: 1, Seed: "002", Ranges: []Range{{lo, hi}}, Text: "002", Quote: q}
	}
	code := func(lo, hi int, q string) Citation {
		c := cite(lo, hi, q)
		c.Code = true
		return c
	}
	for _, tc := range []struct {
		c   Citation
		err string
	}{
		{cite(2, 3, "type casting requires"), ""},
		{cite(3, 3, "casting requires"), ""},        // starts one line early: within Tolerance
		{cite(3, 3, "Type casting … the data"), ""}, // an elision
		{cite(6, 7, "requires the data"), `is at 002 L3`},
		{cite(2, 2, "type casting permits"), `is not in seed 002`},
		{cite(7, 8, ""), `outside seed 002 (L1-7)`},
		{cite(3, 2, ""), `reversed`},
		{Citation{Seed: "005", Ranges: []Range{{1, 1}}}, `seed 005 is not in the manual`},
		{code(6, 6, "tile::<dim, n, _>(t)"), ""}, // schematic code: not in the manual
		{code(6, 6, "casting ... data"), ""},     // elided code is schematic too
		{code(6, 6, "four"), ""},                 // a name
		{code(6, 7, "type casting"), `is at 002 L2`},
	} {
		err := m.Check(tc.c)
		if tc.err == "" {
			assert.NoError(t, err, "%+v", tc.c)
		} else if assert.Error(t, err, "%+v", tc.c) {
			assert.Contains(t, err.Error(), tc.err)
		}
	}
}
