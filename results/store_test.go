package results

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot/plotter"

	"tcpmap/results/digest"
	"tcpmap/results/record"
)

// testRecord makes a planned result for point i of a fake sweep.
func testRecord(t testing.TB, i int) *record.Record {
	plan, err := record.Compress([]byte(fmt.Sprintf(`{"version": 1, "point": %d}`, i)))
	require.NoError(t, err)
	m := 256 << (i % 4)
	return &record.Record{
		Key:   record.Key{Workload: digest.Bytes([]byte("w" + strconv.Itoa(i))), HW: digest.Bytes([]byte("hw")), Options: digest.Bytes([]byte("o")), Cost: "1"},
		Sweep: "test", Point: i, Workload: "gemm", Einsum: "M K, K N -> M N",
		Axes: fmt.Sprintf("M=%d, N=256, K=256", m), DType: "bf16",
		Params: map[string]string{"M": strconv.Itoa(m), "dtype": "bf16"},
		Status: record.StatusPlanned, Cycles: float64(1000 + 7*i%13), Bottleneck: []string{"dma/hbm", "main/switch"}[i%2],
		Bound: "memory", Optimal: "proven", Roofline: 0.5, MACs: float64(m) * 256 * 256, WallSeconds: float64(i),
		Plan: plan,
	}
}

func TestOpenCreatesAndReopens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, s.Put(testRecord(t, 1)))
	require.NoError(t, s.Close())
	s, err = Open(path)
	require.NoError(t, err)
	defer s.Close()
	n, err := s.Count()
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	var v int
	require.NoError(t, s.db.QueryRow(`PRAGMA user_version`).Scan(&v))
	assert.Equal(t, SchemaVersion, v)
	var mode string
	require.NoError(t, s.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode))
	assert.Equal(t, "wal", mode)
}

func TestMigrateFromVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := open(path, 1)
	require.NoError(t, err)
	r := testRecord(t, 3)
	_, err = s.db.Exec(`INSERT INTO results(`+columns+`) VALUES(`+strings.Repeat("?, ", 34)+`?)`, values(r)...)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	s, err = Open(path)
	require.NoError(t, err)
	defer s.Close()
	got, err := s.Get(r.Key.ID())
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, r.Cycles, got.Cycles)
	assert.Empty(t, got.Params, "a version-1 store has no parameters")
	require.NoError(t, s.Put(r)) // the params table exists now
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	newer := filepath.Join(dir, "newer.db")
	s, err := Open(newer)
	require.NoError(t, err)
	_, err = s.db.Exec(`PRAGMA user_version = 99`)
	require.NoError(t, err)
	require.NoError(t, s.Close())

	other := filepath.Join(dir, "other.db")
	db, err := sql.Open("sqlite", other)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE TABLE t(x)`)
	require.NoError(t, err)
	db.Close()

	text := filepath.Join(dir, "text.db")
	require.NoError(t, os.WriteFile(text, []byte("not a database, just some text that is long enough to be read as a header........................................"), 0o644))

	for _, tc := range []struct {
		path, want string
	}{
		{newer, "schema version 99 is newer"},
		{other, "not a result store"},
		{text, "text.db"},
		{dir, "is a directory"},
		{filepath.Join(dir, "missing", "s.db"), "is not a directory"},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			_, err := Open(tc.path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestListFilterGet: List in the sweep's order, its filters applied to
// the stored parameters and columns; Get by an abbreviated ID with the
// plan (record's tests check Filter and Best on records alone).
func TestListFilterGet(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	require.NoError(t, err)
	defer s.Close()
	for i := 0; i < 8; i++ {
		require.NoError(t, s.Put(testRecord(t, i)))
	}
	// Put replaces: storing a point again keeps one row.
	require.NoError(t, s.Put(testRecord(t, 0)))
	all, err := s.List(record.Filter{}, false)
	require.NoError(t, err)
	require.Len(t, all, 8)
	for i, r := range all {
		assert.Equal(t, i, r.Point, "sweep order")
		assert.Nil(t, r.Plan)
	}
	cond := func(s string) record.Cond {
		c, err := record.ParseCond(s)
		require.NoError(t, err)
		return c
	}
	for _, tc := range []struct {
		name string
		f    record.Filter
		want []int
	}{
		{"M equal", record.Filter{Where: []record.Cond{cond("M=512")}}, []int{1, 5}},
		{"M range", record.Filter{Where: []record.Cond{cond("M=512..1024")}}, []int{1, 2, 5, 6}},
		{"M greater", record.Filter{Where: []record.Cond{cond("M>1024")}}, []int{3, 7}},
		{"dtype", record.Filter{Where: []record.Cond{cond("dtype=bf16"), cond("M<=256")}}, []int{0, 4}},
		{"not", record.Filter{Where: []record.Cond{cond("M!=256")}}, []int{1, 2, 3, 5, 6, 7}},
		{"bottleneck", record.Filter{Bottleneck: "switch"}, []int{1, 3, 5, 7}},
		{"workload", record.Filter{Workload: "gemv"}, nil},
		{"column", record.Filter{Where: []record.Cond{cond("cycles>=1008")}}, []int{3, 5, 7}},
		{"missing param", record.Filter{Where: []record.Cond{cond("K=256")}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := s.List(tc.f, false)
			require.NoError(t, err)
			var got []int
			for _, r := range rs {
				got = append(got, r.Point)
			}
			assert.Equal(t, tc.want, got)
		})
	}
	got, err := s.Get(all[2].Key.ID()[:10])
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, 2, got.Point)
	assert.NotEmpty(t, got.Plan)
	plan, err := record.Decompress(got.Plan)
	require.NoError(t, err)
	assert.Contains(t, string(plan), `"point": 2`)
	_, err = s.Get("ab")
	assert.Error(t, err)
}

func TestMergeIdempotentAndConflicts(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string, points ...int) string {
		p := filepath.Join(dir, name)
		s, err := Open(p)
		require.NoError(t, err)
		for _, i := range points {
			require.NoError(t, s.Put(testRecord(t, i)))
		}
		require.NoError(t, s.PutHardware(digest.Bytes([]byte("hw")), []byte(`{"x": 1}`)))
		require.NoError(t, s.Close())
		return p
	}
	a, b := mk("a.db", 0, 1, 2), mk("b.db", 2, 3)
	out, err := Open(filepath.Join(dir, "all.db"))
	require.NoError(t, err)
	defer out.Close()
	ra, err := out.Merge(a)
	require.NoError(t, err)
	rb, err := out.Merge(b)
	require.NoError(t, err)
	assert.Equal(t, MergeReport{Added: 3, Conflicts: []Conflict{}}, *ra)
	assert.Equal(t, MergeReport{Added: 1, Same: 1, Conflicts: []Conflict{}}, *rb)
	again, err := out.Merge(b)
	require.NoError(t, err)
	assert.Equal(t, MergeReport{Same: 2, Conflicts: []Conflict{}}, *again)
	n, _ := out.Count()
	assert.Equal(t, 4, n)
	hw, err := out.Hardware(digest.Bytes([]byte("hw")))
	require.NoError(t, err)
	assert.Equal(t, `{"x": 1}`, string(hw))

	// The same key with other cycles is a conflict; the output keeps its own.
	c := filepath.Join(dir, "c.db")
	s, err := Open(c)
	require.NoError(t, err)
	r := testRecord(t, 1)
	r.Cycles = 5
	require.NoError(t, s.Put(r))
	require.NoError(t, s.Close())
	rc, err := out.Merge(c)
	require.NoError(t, err)
	require.Len(t, rc.Conflicts, 1)
	assert.Equal(t, "cycles", rc.Conflicts[0].Reason)
	kept, err := out.Get(r.Key.ID())
	require.NoError(t, err)
	assert.NotEqual(t, 5.0, kept.Cycles)
}

// KillHelperEnv makes the test binary a writer that stores records until
// it is killed (TestKill9): TestMain (main_test.go) then runs
// WriteUntilKilled on the store it names. Both are exported for TestMain,
// which is in package results_test to run the sweep's helper too.
const KillHelperEnv = "TCPMAP_RESULTS_KILL_HELPER"

// WriteUntilKilled stores the records of killPoints points over and over
// into the store at path; it ends the process only on an error.
func WriteUntilKilled(path string) {
	s, err := Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		if err := s.Put(testRecord(&testing.T{}, i%killPoints)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

const killPoints = 400

// TestKill9 kills a process that is writing results with SIGKILL, then
// checks that the store is intact (SQLite's integrity check, every result
// with its parameters) and that writing the rest completes.
func TestKill9(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.db")
	rounds := 3
	if testing.Short() {
		rounds = 2
	}
	for round := 0; round < rounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), KillHelperEnv+"="+path)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		// Let it write for a while, then kill it in mid-stream.
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			if n := countRows(t, path); n >= 20*(round+1) {
				break
			}
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		err := cmd.Wait()
		require.Error(t, err, "the helper only ends by being killed")

		s, err := Open(path)
		require.NoError(t, err)
		require.NoError(t, s.Check())
		var results, params int
		require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM results`).Scan(&results))
		require.NoError(t, s.db.QueryRow(`SELECT count(*) FROM params`).Scan(&params))
		assert.Equal(t, 2*results, params, "every stored result has its parameters")
		assert.Positive(t, results)
		require.NoError(t, s.Close())
	}
	// The rest completes.
	s, err := Open(path)
	require.NoError(t, err)
	defer s.Close()
	var ids []string
	for i := 0; i < killPoints; i++ {
		ids = append(ids, testRecord(t, i).Key.ID())
	}
	have, err := s.Has(ids)
	require.NoError(t, err)
	for i := 0; i < killPoints; i++ {
		if !have[ids[i]] {
			require.NoError(t, s.Put(testRecord(t, i)))
		}
	}
	n, err := s.Count()
	require.NoError(t, err)
	assert.Equal(t, killPoints, n)
	require.NoError(t, s.Check())
}

// countRows counts the results of the store at path from a second
// connection (0 before it exists).
func countRows(t *testing.T, path string) int {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	require.NoError(t, err)
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM results`).Scan(&n); err != nil {
		return 0
	}
	return n
}

func TestParetoFront(t *testing.T) {
	pts := plotter.XYs{{X: 3, Y: 1}, {X: 1, Y: 5}, {X: 2, Y: 2}, {X: 2, Y: 4}, {X: 4, Y: 1}, {X: 1, Y: 6}}
	assert.Equal(t, plotter.XYs{{X: 1, Y: 5}, {X: 2, Y: 2}, {X: 3, Y: 1}}, ParetoFront(pts))
}
