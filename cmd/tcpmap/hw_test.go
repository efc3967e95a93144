package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const rngdPath = "../../engines/rngd.yaml"

// writeSpecFile writes rngd.yaml with old replaced by new to a temp file.
func writeSpecFile(t *testing.T, old, new string) string {
	t.Helper()
	data, err := os.ReadFile(rngdPath)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(data), old))
	path := filepath.Join(t.TempDir(), "spec.yaml")
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
	return path
}

func TestHWShow(t *testing.T) {
	code, out, errOut := runCLI(t, "hw", "show")
	require.Equal(t, exitOK, code, errOut)
	lines := strings.Split(out, "\n")
	assert.Equal(t, "# hardware spec rngd.yaml (embedded)", lines[0])
	assert.Regexp(t, `(?m)^dm\.banks +002 L2869, L2874 +16$`, out)
	assert.Regexp(t, `(?m)^clock\.ghz +002 L2623, L2744 +1  \[assumption\]  # the core clock`, out)
	assert.Regexp(t, `(?m)^hbm\.cycles_per_request +002 L2744 +5\.3  \[from example\]`, out)
	assert.Regexp(t, `(?m)^trf\.reg_types +002 L4141-4147 +\[\{RegType:0 ElementBits:5 Slots:1 ElementsPerRow:64\}`, out)

	// Deterministic.
	_, out2, _ := runCLI(t, "hw", "show")
	assert.Equal(t, out, out2)
}

func TestHWShowJSON(t *testing.T) {
	code, out, errOut := runCLI(t, "hw", "show", "--json")
	require.Equal(t, exitOK, code, errOut)
	var spec map[string]map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &spec))
	var banks struct {
		Value int    `json:"value"`
		Cite  string `json:"cite"`
	}
	require.NoError(t, json.Unmarshal(spec["dm"]["banks"], &banks))
	assert.Equal(t, 16, banks.Value)
	assert.Equal(t, "002 L2869, L2874", banks.Cite)
}

func TestHWShowOverride(t *testing.T) {
	path := writeSpecFile(t, `bytes_per_cycle: {value: 30,`, `bytes_per_cycle: {value: 32,`)
	code, out, errOut := runCLI(t, "--hw", path, "hw", "show")
	require.Equal(t, exitOK, code, errOut)
	assert.Contains(t, out, "# hardware spec "+path+"\n")
	assert.Regexp(t, `(?m)^pcie\.bytes_per_cycle +002 L2389, L2605, L2845 +32$`, out)

	bad := writeSpecFile(t, `slices_per_dmn: {value: 32,`, `slices_per_dmn: {value: 16,`)
	code, out, errOut = runCLI(t, "--hw", bad, "hw", "show")
	assert.Equal(t, exitFail, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "tcpmap: "+bad+":")
	assert.Contains(t, errOut, "cluster.slices.value: 256, want dmns × slices_per_dmn (8 × 16) = 128")
}

func TestHWCheck(t *testing.T) {
	code, out, _ := runCLI(t, "hw", "check", rngdPath)
	assert.Equal(t, exitOK, code)
	assert.Regexp(t, `^\.\./\.\./engines/rngd\.yaml: ok \(\d+ values\)\n$`, out)

	bad := "../../engines/testdata/bad-dm-size.yaml"
	code, out, _ = runCLI(t, "hw", "check", bad)
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, bad+": invalid (")
	assert.Regexp(t, `(?m)^`+regexp.QuoteMeta(bad)+`:\d+: dm\.bytes_per_slice\.value: 524288, want banks × bank_width_bytes × rows_per_bank \(16 × 8 × 2048\) = 262144$`, out)

	code, out, _ = runCLI(t, "hw", "check", "no-such-file.yaml")
	assert.Equal(t, exitFail, code)
	assert.Contains(t, out, "no-such-file.yaml: invalid (1 error)\n")

	code, _, _ = runCLI(t, "hw", "check")
	assert.Equal(t, exitUsage, code)
	code, _, _ = runCLI(t, "hw", "show", "extra")
	assert.Equal(t, exitUsage, code)
}

func TestHWCheckJSON(t *testing.T) {
	code, out, _ := runCLI(t, "hw", "check", "--json", rngdPath)
	assert.Equal(t, exitOK, code)
	var ok hwCheckResult
	require.NoError(t, json.Unmarshal([]byte(out), &ok))
	assert.True(t, ok.Valid)
	assert.Positive(t, ok.Values)

	bad := "../../engines/testdata/bad-syntax.yaml"
	code, out, _ = runCLI(t, "hw", "check", "--json", bad)
	assert.Equal(t, exitFail, code)
	var res struct {
		File   string `json:"file"`
		Valid  bool   `json:"valid"`
		Errors []struct {
			File  string `json:"file"`
			Line  int    `json:"line"`
			Field string `json:"field"`
			Msg   string `json:"msg"`
		} `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	assert.False(t, res.Valid)
	require.Len(t, res.Errors, 1)
	assert.Equal(t, 2, res.Errors[0].Line)
	assert.Equal(t, "did not find expected ',' or '}'", res.Errors[0].Msg)
}
