// Package results is tcpmap's result store: an embedded SQLite database
// (modernc.org/sqlite, pure Go) that holds the outcome of every planned
// sweep point, keyed by content hashes, so that a point already planned is
// never planned again. It also lists what the store holds (List, Get),
// merges stores written by shards of one sweep, and plots what they hold.
//
// The schema, its migrations and the meaning of every column are in
// docs/results-store.md. A stored result is a record.Record (package
// results/record, which also holds the filters, Best and the exports);
// its key is the hash of four content hashes (record.Key): the canonical
// workload, the hardware spec, the planner options and the cost model's
// version. Writes are transactions on a database in WAL mode: killing the
// writing process loses at most the results it had not committed and
// never corrupts the store.
//
// The package plans nothing: package search/sweep plans the points and hands the
// results here, through its Store interface (*Store is one), so that the
// sweep's race-tested code and tests do not link SQLite. Besides the Go package, the results/ folder holds stored
// outputs (results/README.md): the cost-model baseline, plans and plots.
package results
