package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
)

// runCLI runs the command line and returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestVersion(t *testing.T) {
	code, out, _ := runCLI(t, "version")
	assert.Equal(t, exitOK, code)
	assert.Equal(t, "tcpmap "+Version+"\n", out)

	code, out, _ = runCLI(t, "version", "--json")
	assert.Equal(t, exitOK, code)
	assert.JSONEq(t, `{"version":"`+Version+`"}`, out)
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"no-such-command"},
		{"version", "extra"},
		{"--no-such-flag"},
	} {
		code, _, errOut := runCLI(t, args...)
		assert.Equal(t, exitUsage, code, "args %v", args)
		assert.Contains(t, errOut, "tcpmap: ", "args %v", args)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := runCLI(t, "--help")
	assert.Equal(t, exitOK, code)
	assert.Contains(t, out, "Tensor Contraction Processor")
}
