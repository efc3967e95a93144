package record

import (
	"crypto/sha256"
	"encoding/hex"
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
