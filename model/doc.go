// Package model is tcpmap's vocabulary, split into subpackages with one job
// each: mapping (the m![...] algebra), dtype (element types and their
// numerics), workload (einsum and graph YAML), kernel (the kernel program IR
// and the engines' configurations as plain data) and plan (a plan file:
// mapping, kernel program and cost). It does not import the hardware
// package (engines).
package model
