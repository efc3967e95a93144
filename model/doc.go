// Package model is tcpmap's vocabulary, split into subpackages with one job
// each: mapping (the m![...] algebra), dtype (element types and their
// numerics), workload (einsum and graph YAML). It knows nothing of the
// hardware.
package model
