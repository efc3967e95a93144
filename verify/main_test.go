package verify

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"tcpmap/internal/racerun"
)

// raceVerify selects the tests the package's race run runs: one of each
// path whose slices or loops run on several goroutines (GOMAXPROCS
// workers): DMA moves and a sampled GEMM (the executor's slice workers,
// the TRF and the contraction), the Vector Engine's stages, the
// inter-slice block's reduce on a fresh worker, interleaved fetch, a
// graph carried between kernels and its relayout, the parallel
// reference, the device memory the workers share, and a sample that must
// fail. The package's other tests run the same workers on other
// configurations; under the detector they cost 3-10x, and `make test`
// runs every test of the package without it (unit-norace).
// TestRaceVerifyNamed fails when it names a test no file declares.
const raceVerify = `^(TestExecMoves|TestVerifySample|TestVerifyVectorWrongConfigs|TestVerifyInterSliceGolden|` +
	`TestExecInterSliceFreshWorker|TestExecInterleavedFetch|TestVerifyGraphHead|TestVerifyGraphRelayout|` +
	`TestReferenceRandomEinsums|TestDeviceMemory|TestSampleNeverPassesAFailure)$`

// TestMain runs raceVerify's tests alone under the race detector when no
// -run names others, so that `go test -race` of the race-tested packages
// is one command (make test's unit).
func TestMain(m *testing.M) { racerun.Main(m, raceEnabled, raceVerify) }

// TestRaceVerifyNamed: every test the race run selects is a test of this
// package (go test -run matches nothing silently).
func TestRaceVerifyNamed(t *testing.T) {
	missing, err := racerun.Undeclared(raceVerify, ".")
	require.NoError(t, err)
	assert.Empty(t, missing, "raceVerify names tests no test file of verify declares")
}
