package cost

import (
	"errors"
	"fmt"

	"tcpmap/model/kernel"
)

// CastCycles prices the Cast Engine on steps input flits: one 32-byte flit
// in and one out per cycle; it "is a pass-through stage that is never the
// pipeline bottleneck" (002 L6781-6782, L6819). No latency is stated.
func CastCycles(steps int) (int, error) {
	if steps < 0 {
		return 0, fmt.Errorf("cost: cast of %d flits", steps)
	}
	return steps, nil
}

// Cast prices a lowered cast over steps input flits (the configuration does
// not carry Time, which passes through, 002 L6782).
func Cast(c *kernel.CastConfig, steps int) (int, error) {
	if c == nil {
		return 0, errors.New("cost: Cast: nil configuration")
	}
	if c.Valid < 0 || c.Valid > c.InElems || c.Valid > c.OutElems {
		return 0, fmt.Errorf("cost: Cast: %d valid elements of %d in, %d out", c.Valid, c.InElems, c.OutElems)
	}
	return CastCycles(steps)
}
