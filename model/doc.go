// Package model is tcpmap's vocabulary, split into subpackages with one job
// each: mapping (the m![...] algebra), dtype (element types and their
// numerics), workload (einsum and graph YAML), kernel (the kernel program IR
// and the engines' configurations as plain data), plan (a plan file:
// mapping, kernel program and cost) and pos (the positioned error every
// reader reports, file:line:col: field: msg). It does not import the hardware
// package (engines).
package model
