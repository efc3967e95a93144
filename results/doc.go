// Package results is tcpmap's result store: an embedded SQLite database
// (modernc.org/sqlite, pure Go) that holds the outcome of every planned
// sweep point, keyed by content hashes, so that a point already planned is
// never planned again. It also queries the store (list, best, export),
// merges stores written by shards of one sweep, and plots what they hold.
//
// The schema, its migrations and the meaning of every column are in
// docs/results-store.md. A result's key is the hash of four content
// hashes (Key): the canonical workload, the hardware spec, the planner
// options and the cost model's version. Writes are transactions on a
// database in WAL mode: killing the writing process loses at most the
// results it had not committed and never corrupts the store.
//
// The package plans nothing: package search/sweep plans the points and hands the
// results here. Besides the Go package, the results/ folder holds stored
// outputs (results/README.md): the cost-model baseline, plans and plots.
package results
