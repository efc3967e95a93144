package rustread

import "tcpmap/emit/internal/emittest"

// The helpers shared with the Rust reader's tests (emit/internal/emittest).
var (
	goldenKernels = emittest.GoldenKernels
	tiledKernels  = emittest.TiledKernels
	vectorGolden  = emittest.VectorGolden
	loadGolden    = emittest.LoadGolden
	programJSON   = emittest.ProgramJSON
	tensor        = emittest.Tensor
	lastChain     = emittest.LastChain
	stageOf       = emittest.StageOf
	renameTensor  = emittest.RenameTensor
	addSwitch     = emittest.AddSwitch
	unwrap        = emittest.Unwrap
)
