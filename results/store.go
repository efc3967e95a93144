package results

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver, pure Go

	"tcpmap/results/record"
)

// DefaultPath is the store a sweep writes when no --db is given.
const DefaultPath = "results/tcpmap.db"

// Store is an open result store.
type Store struct {
	db   *sql.DB
	path string
}

// migrations are the schema's steps; migration i+1 takes a store from
// user_version i to i+1 (docs/results-store.md describes the result).
var migrations = []string{
	// 1: results and the hardware specs they were planned on.
	`CREATE TABLE results (
		id TEXT PRIMARY KEY,
		workload_hash TEXT NOT NULL,
		hw_hash TEXT NOT NULL,
		options_hash TEXT NOT NULL,
		cost_version TEXT NOT NULL,
		sweep TEXT NOT NULL,
		point INTEGER NOT NULL,
		workload TEXT NOT NULL,
		op TEXT NOT NULL,
		einsum TEXT NOT NULL,
		axes TEXT NOT NULL,
		dtype TEXT NOT NULL,
		status TEXT NOT NULL,
		message TEXT NOT NULL,
		cycles REAL NOT NULL,
		seconds REAL NOT NULL,
		mac_utilization REAL NOT NULL,
		hbm_utilization REAL NOT NULL,
		roofline REAL NOT NULL,
		roofline_cycles REAL NOT NULL,
		bound TEXT NOT NULL,
		bottleneck TEXT NOT NULL,
		bottleneck_share REAL NOT NULL,
		hbm_bytes INTEGER NOT NULL,
		macs REAL NOT NULL,
		min_hbm_bytes INTEGER NOT NULL,
		peak_macs_per_cycle REAL NOT NULL,
		peak_hbm_bytes_per_cycle REAL NOT NULL,
		optimal TEXT NOT NULL,
		stopped TEXT NOT NULL,
		gap REAL NOT NULL,
		candidates INTEGER NOT NULL,
		legal INTEGER NOT NULL,
		wall_seconds REAL NOT NULL,
		plan BLOB
	);
	CREATE TABLE hardware (
		hash TEXT PRIMARY KEY,
		spec BLOB NOT NULL
	);`,
	// 2: the swept parameters, one row each, for filters on their values;
	// indexes for the usual filters.
	`CREATE TABLE params (
		id TEXT NOT NULL REFERENCES results(id) ON DELETE CASCADE,
		name TEXT NOT NULL,
		value TEXT NOT NULL,
		num REAL,
		PRIMARY KEY (id, name)
	);
	CREATE INDEX params_name_num ON params(name, num);
	CREATE INDEX results_workload ON results(workload, op);
	CREATE INDEX results_bottleneck ON results(bottleneck);`,
}

// SchemaVersion is the schema version this package writes (PRAGMA
// user_version).
var SchemaVersion = len(migrations)

// Open opens the store at path, creating it (and applying every migration)
// when it does not exist, migrating it when it is older. A store written
// by a newer tcpmap (a higher version) is refused.
func Open(path string) (*Store, error) {
	return open(path, len(migrations))
}

// open opens the store and migrates it up to version upTo (tests stop
// early to make an old store).
func open(path string, upTo int) (*Store, error) {
	if path == "" {
		return nil, errors.New("results: empty store path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("%s: cannot open the store: %s is not a directory", path, dir)
		}
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, want a store file", path)
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(1)"} {
		q.Add("_pragma", p)
	}
	// Transactions take the write lock when they begin (BEGIN IMMEDIATE),
	// so two processes migrating one new store wait for each other.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// One connection: the workers' writes are serialized here, and every
	// statement sees the pragmas above.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, path: path}
	if err := s.migrate(upTo); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// migrate applies the migrations the store lacks, each in a transaction.
func (s *Store) migrate(upTo int) error {
	// The version and the objects in one statement, so from one snapshot:
	// read apart, another process's first migration could commit between
	// them, and its tables would look like a database that is no store.
	var v, n int
	if err := s.db.QueryRow(`SELECT user_version, (SELECT count(*) FROM sqlite_schema) FROM pragma_user_version`).Scan(&v, &n); err != nil {
		return fmt.Errorf("%s: not a result store: %w", s.path, err)
	}
	if v > len(migrations) {
		return fmt.Errorf("%s: schema version %d is newer than this tcpmap's %d", s.path, v, len(migrations))
	}
	if v == 0 && n > 0 {
		// Not a new store: a SQLite file that is something else.
		return fmt.Errorf("%s: a SQLite database that is not a result store (schema version 0 with %d objects)", s.path, n)
	}
	for ; v < upTo; v++ {
		tx, err := s.db.Begin()
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		// Another process may have migrated the store meanwhile.
		var now int
		if err := tx.QueryRow(`PRAGMA user_version`).Scan(&now); err != nil {
			tx.Rollback()
			return fmt.Errorf("%s: %w", s.path, err)
		}
		if now > v {
			tx.Rollback()
			v = now - 1
			continue
		}
		if _, err := tx.Exec(migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("%s: migration %d: %w", s.path, v+1, err)
		}
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("%s: migration %d: %w", s.path, v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("%s: migration %d: %w", s.path, v+1, err)
		}
	}
	return nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Close checkpoints the write-ahead log into the database and closes it.
func (s *Store) Close() error {
	s.db.Exec(`PRAGMA wal_checkpoint(TRUNCATE)`)
	return s.db.Close()
}

// Check runs SQLite's integrity check and reports any problem it finds.
func (s *Store) Check() error {
	rows, err := s.db.Query(`PRAGMA integrity_check`)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	defer rows.Close()
	var bad []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return err
		}
		if m != "ok" {
			bad = append(bad, m)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("%s: integrity check: %s", s.path, strings.Join(bad, "; "))
	}
	return nil
}

// PutHardware stores a hardware spec (its canonical JSON) under its hash,
// once.
func (s *Store) PutHardware(hash string, specJSON []byte) error {
	z, err := record.Compress(specJSON)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(`INSERT OR IGNORE INTO hardware(hash, spec) VALUES(?, ?)`, hash, z)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	return nil
}

// Hardware returns the canonical JSON of the hardware spec stored under
// hash.
func (s *Store) Hardware(hash string) ([]byte, error) {
	var z []byte
	err := s.db.QueryRow(`SELECT spec FROM hardware WHERE hash = ?`, hash).Scan(&z)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("%s: no hardware spec %s", s.path, short(hash))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return record.Decompress(z)
}

// short abbreviates a hash for messages.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// columns are the results table's columns in the order put and scan use.
const columns = `id, workload_hash, hw_hash, options_hash, cost_version, sweep, point,
	workload, op, einsum, axes, dtype, status, message, cycles, seconds,
	mac_utilization, hbm_utilization, roofline, roofline_cycles, bound, bottleneck,
	bottleneck_share, hbm_bytes, macs, min_hbm_bytes, peak_macs_per_cycle,
	peak_hbm_bytes_per_cycle, optimal, stopped, gap, candidates, legal, wall_seconds, plan`

// values are r's columns in the order of columns.
func values(r *record.Record) []any {
	return []any{r.Key.ID(), r.Key.Workload, r.Key.HW, r.Key.Options, r.Key.Cost, r.Sweep, r.Point,
		r.Workload, r.Op, r.Einsum, r.Axes, r.DType, r.Status, r.Message, r.Cycles, r.Seconds,
		r.MACUtilization, r.HBMUtilization, r.Roofline, r.RooflineCycles, r.Bound, r.Bottleneck,
		r.BottleneckShare, r.HBMBytes, r.MACs, r.MinHBMBytes, r.PeakMACsPerCycle,
		r.PeakHBMBytesPerCycle, r.Optimal, r.Stopped, r.Gap, r.Candidates, r.Legal, r.WallSeconds, r.Plan}
}

type scanner interface{ Scan(...any) error }

func scanRecord(sc scanner) (*record.Record, error) {
	r := &record.Record{}
	var id string
	err := sc.Scan(&id, &r.Key.Workload, &r.Key.HW, &r.Key.Options, &r.Key.Cost, &r.Sweep, &r.Point,
		&r.Workload, &r.Op, &r.Einsum, &r.Axes, &r.DType, &r.Status, &r.Message, &r.Cycles, &r.Seconds,
		&r.MACUtilization, &r.HBMUtilization, &r.Roofline, &r.RooflineCycles, &r.Bound, &r.Bottleneck,
		&r.BottleneckShare, &r.HBMBytes, &r.MACs, &r.MinHBMBytes, &r.PeakMACsPerCycle,
		&r.PeakHBMBytesPerCycle, &r.Optimal, &r.Stopped, &r.Gap, &r.Candidates, &r.Legal, &r.WallSeconds, &r.Plan)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Put stores r (replacing a result with the same key) in one transaction:
// the result and its parameters are both stored or neither is.
func (s *Store) Put(r *record.Record) error {
	return s.put(context.Background(), r)
}

func (s *Store) put(ctx context.Context, r *record.Record) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
			err = fmt.Errorf("%s: storing point %d: %w", s.path, r.Point, err)
		}
	}()
	id := r.Key.ID()
	if _, err = tx.Exec(`DELETE FROM params WHERE id = ?`, id); err != nil {
		return err
	}
	if _, err = tx.Exec(`INSERT OR REPLACE INTO results(`+columns+`) VALUES(`+strings.Repeat("?, ", 34)+`?)`, values(r)...); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(r.Params)) {
		v := r.Params[name]
		var num any
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			num = f
		}
		if _, err = tx.Exec(`INSERT INTO params(id, name, value, num) VALUES(?, ?, ?, ?)`, id, name, v, num); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Has returns the IDs among ids that the store holds.
func (s *Store) Has(ids []string) (map[string]bool, error) {
	got := map[string]bool{}
	rows, err := s.db.Query(`SELECT id FROM results`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	defer rows.Close()
	want := make(map[string]bool, len(ids))
	for _, id := range ids {
		want[id] = true
	}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		if want[id] {
			got[id] = true
		}
	}
	return got, rows.Err()
}

// Get returns the result with the given ID, or nil when the store has
// none. prefix may be an abbreviated ID (at least 6 hex digits) that
// matches one result.
func (s *Store) Get(prefix string) (*record.Record, error) {
	if len(prefix) < 6 {
		return nil, fmt.Errorf("result ID %q: give at least 6 hex digits", prefix)
	}
	rows, err := s.db.Query(`SELECT `+columns+` FROM results WHERE id >= ? AND id < ? ORDER BY id LIMIT 2`, prefix, prefix+"g")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	var out []*record.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch len(out) {
	case 0:
		return nil, nil
	case 2:
		return nil, fmt.Errorf("result ID %q is ambiguous in %s: give more digits", prefix, s.path)
	}
	if err := s.loadParams(out); err != nil {
		return nil, err
	}
	return out[0], nil
}

// loadParams fills the records' Params.
func (s *Store) loadParams(rs []*record.Record) error {
	byID := make(map[string]*record.Record, len(rs))
	for _, r := range rs {
		r.Params = map[string]string{}
		byID[r.Key.ID()] = r
	}
	rows, err := s.db.Query(`SELECT id, name, value FROM params`)
	if err != nil {
		return fmt.Errorf("%s: %w", s.path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, name, value string
		if err := rows.Scan(&id, &name, &value); err != nil {
			return err
		}
		if r := byID[id]; r != nil {
			r.Params[name] = value
		}
	}
	return rows.Err()
}

// Count is the number of results stored.
func (s *Store) Count() (int, error) {
	var n int
	if err := s.db.QueryRow(`SELECT count(*) FROM results`).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s: %w", s.path, err)
	}
	return n, nil
}
