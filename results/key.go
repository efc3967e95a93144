package results

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Key identifies a result by content: four SHA-256 hashes (hex) of the
// canonical workload, of the hardware spec, of the planner options and of
// the cost model's version. Two points with equal keys plan the same
// contraction on the same hardware with the same search and price it the
// same way, so one's result serves the other.
type Key struct {
	Workload string `json:"workload"`
	HW       string `json:"hw"`
	Options  string `json:"options"`
	Cost     string `json:"cost"`
}

// ID is the result's primary key: the SHA-256 (hex) of the four hashes.
func (k Key) ID() string {
	h := sha256.Sum256([]byte(k.Workload + "\n" + k.HW + "\n" + k.Options + "\n" + k.Cost))
	return hex.EncodeToString(h[:])
}

// Hash is the SHA-256 (hex) of v's JSON encoding. encoding/json writes
// struct fields in declaration order and map keys sorted, so a value built
// the same way always hashes the same.
func Hash(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("results: hashing %T: %w", v, err)
	}
	return HashBytes(b), nil
}

// HashBytes is the SHA-256 (hex) of b.
func HashBytes(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
