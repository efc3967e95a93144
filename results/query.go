package results

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"tcpmap/results/record"
)

// List returns the results that pass f, in the sweep's order (sweep name,
// point index, ID). With plans false the records' Plan is left nil.
func (s *Store) List(f record.Filter, plans bool) ([]*record.Record, error) {
	cols := columns
	if !plans {
		cols = strings.Replace(columns, "wall_seconds, plan", "wall_seconds, NULL", 1)
	}
	rows, err := s.db.Query(`SELECT ` + cols + ` FROM results ORDER BY sweep, point, id`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	var all []*record.Record
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
		all = append(all, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	if err := s.loadParams(all); err != nil {
		return nil, err
	}
	out := all[:0]
	for _, r := range all {
		if f.Match(r) {
			out = append(out, r)
		}
	}
	return out, nil
}

// sameResult reports whether two records with the same key hold the same
// result: everything but the wall time and where they were planned from
// (sweep, point).
func sameResult(a, b *record.Record) bool {
	return a.Status == b.Status && a.Message == b.Message && a.Cycles == b.Cycles &&
		a.Bottleneck == b.Bottleneck && a.Bound == b.Bound && a.Optimal == b.Optimal &&
		a.Gap == b.Gap && a.Roofline == b.Roofline && bytes.Equal(a.Plan, b.Plan)
}

// Conflict is a key two stores hold with different results.
type Conflict struct {
	ID     string `json:"id"`
	File   string `json:"file"`
	Point  string `json:"point"`
	Kept   string `json:"kept"`
	Other  string `json:"other"`
	Reason string `json:"reason"`
}

// MergeReport counts what a merge did.
type MergeReport struct {
	// Added results were new to the output, Same ones it already held
	// with the same result; Conflicts the ones it held with another
	// result (the output keeps its own).
	Added     int        `json:"added"`
	Same      int        `json:"same"`
	Conflicts []Conflict `json:"conflicts"`
}

func summary(r *record.Record) string {
	if r.Status != record.StatusPlanned {
		return r.Status
	}
	return fmt.Sprintf("%.0f cycles, %s, optimal %q, gap %.3g", r.Cycles, r.Bottleneck, r.Optimal, r.Gap)
}

// Merge copies every result (and hardware spec) of the store at path into
// s. A result s already holds is kept: counted as Same when the other
// store's is equal, reported as a Conflict when it differs. Merging the
// same store twice changes nothing.
func (s *Store) Merge(path string) (*MergeReport, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	src, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	rows, err := src.db.Query(`SELECT hash, spec FROM hardware ORDER BY hash`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	type hw struct {
		hash string
		z    []byte
	}
	var hws []hw
	for rows.Next() {
		var h hw
		if err := rows.Scan(&h.hash, &h.z); err != nil {
			rows.Close()
			return nil, err
		}
		hws = append(hws, h)
	}
	rows.Close()
	for _, h := range hws {
		if _, err := s.db.Exec(`INSERT OR IGNORE INTO hardware(hash, spec) VALUES(?, ?)`, h.hash, h.z); err != nil {
			return nil, fmt.Errorf("%s: %w", s.path, err)
		}
	}
	theirs, err := src.List(record.Filter{}, true)
	if err != nil {
		return nil, err
	}
	ours, err := s.List(record.Filter{}, true)
	if err != nil {
		return nil, err
	}
	have := make(map[string]*record.Record, len(ours))
	for _, r := range ours {
		have[r.Key.ID()] = r
	}
	rep := &MergeReport{Conflicts: []Conflict{}}
	for _, r := range theirs {
		id := r.Key.ID()
		cur, ok := have[id]
		switch {
		case !ok:
			if err := s.Put(r); err != nil {
				return nil, err
			}
			have[id] = r
			rep.Added++
		case sameResult(cur, r):
			rep.Same++
		default:
			rep.Conflicts = append(rep.Conflicts, Conflict{ID: id, File: path, Point: r.PointText(),
				Kept: summary(cur), Other: summary(r), Reason: differs(cur, r)})
		}
	}
	return rep, nil
}

// differs names the first field in which two results differ.
func differs(a, b *record.Record) string {
	switch {
	case a.Status != b.Status:
		return "status"
	case a.Cycles != b.Cycles:
		return "cycles"
	case a.Bottleneck != b.Bottleneck:
		return "bottleneck"
	case a.Optimal != b.Optimal || a.Gap != b.Gap:
		return "optimality"
	case !bytes.Equal(a.Plan, b.Plan):
		return "plan"
	}
	return "message"
}
