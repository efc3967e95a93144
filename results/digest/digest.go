// Package digest computes the content hashes the result store's keys are
// made of (record.Key) and the planners' caches are named by. It is apart
// from package results so that the planners hash their keys without
// linking the store's SQLite driver.
package digest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// JSON is the SHA-256 (hex) of v's JSON encoding. encoding/json writes
// struct fields in declaration order and map keys sorted, so a value built
// the same way always hashes the same.
func JSON(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("digest: hashing %T: %w", v, err)
	}
	return Bytes(b), nil
}

// Bytes is the SHA-256 (hex) of b.
func Bytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
