package sweep

import "tcpmap/results/record"

// Store is what Run needs of a result store: it stores the hardware specs
// the results refer to, says which results it already holds, and stores a
// new result in one piece; Run's workers call Put at once, so it must be
// safe for concurrent use. *results.Store (the SQLite store) is one; the
// package does not import it, so that its race-tested code and tests do
// not link the SQLite driver (the tests use a store in memory).
type Store interface {
	// PutHardware stores a hardware spec's canonical JSON under its hash,
	// once.
	PutHardware(hash string, specJSON []byte) error
	// Has returns the IDs among ids that the store holds.
	Has(ids []string) (map[string]bool, error)
	// Put stores r, replacing a result with the same key; r and its
	// parameters are stored together or not at all.
	Put(r *record.Record) error
}

// StoreReader is what RegressStore reads of a result store
// (*results.Store is one).
type StoreReader interface {
	// List returns the results that pass f in the sweep's order (sweep
	// name, point index, ID); with plans false their Plan is nil.
	List(f record.Filter, plans bool) ([]*record.Record, error)
	// Hardware returns the canonical JSON of the hardware spec stored
	// under hash.
	Hardware(hash string) ([]byte, error)
	// Path names the store in messages (its file).
	Path() string
}
