package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestVerifyCmdVector: a Vector Engine kernel with an expression
// reference verifies from the command line, from its JSON and from its
// emitted Rust.
func TestVerifyCmdVector(t *testing.T) {
	code, out, errs := runCLI(t, "verify", "../../workloads/kernels/ve-staged-pipeline.json")
	require.Equal(t, exitOK, code, errs)
	assert.True(t, strings.HasPrefix(out, "PASS ve-staged-pipeline (seed 1, slices all)\n"), out)
	assert.Contains(t, out, "compared 512 of 512 output elements; 0 MACs simulated")
	code, out, errs = runCLI(t, "cost", "../../workloads/kernels/softmax-decode.json")
	require.Equal(t, exitOK, code, errs)
	assert.Contains(t, out, "kernel softmax-decode: ")
}
