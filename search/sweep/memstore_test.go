package sweep

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"tcpmap/results/record"
)

// memStore is a result store in memory for the tests: a Store and a
// StoreReader as the SQLite store (package results) is one, without
// linking SQLite into the package's race-tested test binary. It keeps
// copies, as a database does: a record put and changed later is not
// changed in the store, and List's records are the caller's own.
type memStore struct {
	path string

	mu       sync.Mutex
	results  map[string]*record.Record
	hardware map[string][]byte
}

var (
	_ Store       = (*memStore)(nil)
	_ StoreReader = (*memStore)(nil)
)

func newMemStore(t testing.TB) *memStore {
	return &memStore{path: t.Name() + ".mem", results: map[string]*record.Record{}, hardware: map[string][]byte{}}
}

// clone copies r with its parameters (the plan's bytes are never
// changed in place, so the copies share them).
func clone(r *record.Record) *record.Record {
	c := *r
	c.Params = maps.Clone(r.Params)
	return &c
}

func (s *memStore) PutHardware(hash string, specJSON []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.hardware[hash]; !ok {
		s.hardware[hash] = slices.Clone(specJSON)
	}
	return nil
}

func (s *memStore) Hardware(hash string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	spec, ok := s.hardware[hash]
	if !ok {
		return nil, fmt.Errorf("%s: no hardware spec %s", s.path, hash)
	}
	return slices.Clone(spec), nil
}

func (s *memStore) Has(ids []string) (map[string]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	got := map[string]bool{}
	for _, id := range ids {
		if _, ok := s.results[id]; ok {
			got[id] = true
		}
	}
	return got, nil
}

func (s *memStore) Put(r *record.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.results[r.Key.ID()] = clone(r)
	return nil
}

// List returns the results f matches in the SQLite store's order (sweep,
// point, ID).
func (s *memStore) List(f record.Filter, plans bool) ([]*record.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*record.Record
	for _, r := range s.results {
		if !f.Match(r) {
			continue
		}
		c := clone(r)
		if !plans {
			c.Plan = nil
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *record.Record) int {
		return cmp.Or(cmp.Compare(a.Sweep, b.Sweep), cmp.Compare(a.Point, b.Point), cmp.Compare(a.Key.ID(), b.Key.ID()))
	})
	return out, nil
}

func (s *memStore) Path() string { return s.path }

// Count is the number of results stored.
func (s *memStore) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.results)
}
