// Package record is a planned sweep point as the result store holds it:
// the result's content key (Key), its columns and parameters (Record,
// the Status* values), the compressed plan (Compress, Decompress), the
// filters and groupings the store's queries apply (Cond, Filter, Best)
// and the JSON and CSV exports (WriteJSON, WriteCSV).
//
// It is apart from package results, the SQLite store, so that what plans
// and reads records without storing them (search/sweep, whose tests run
// under the race detector) does not link the store's SQLite driver.
package record
