package search

import (
	"tcpmap/constraints"
	"tcpmap/engines"
)

// The mapspace lives in constraints/ (the problem, the candidate mapping,
// the level table, the enumerator, the SAT encoding, the mapping-file
// reader); search plans over it. Its names are spelled here as search has
// always spelled them, so that the planners read as before.
type (
	Class         = constraints.Class
	Axis          = constraints.Axis
	Operand       = constraints.Operand
	Problem       = constraints.Problem
	Level         = constraints.Level
	PacketMode    = constraints.PacketMode
	PacketContent = constraints.PacketContent
	Broadcast     = constraints.Broadcast
	Layout        = constraints.Layout
	Accumulation  = constraints.Accumulation
	Candidate     = constraints.Candidate
	DigitOrder    = constraints.DigitOrder
	Stage         = constraints.Stage
	Role          = constraints.Role
	Encoding      = constraints.Encoding
	Skeleton      = constraints.Skeleton
	MapSpec       = constraints.MapSpec
	MapField      = constraints.MapField
	MapDim        = constraints.MapDim
	Conflict      = constraints.Conflict
	FieldUse      = constraints.FieldUse
	RuleViolation = constraints.RuleViolation
	Assumption    = constraints.Assumption
)

// The mapspace's constants (constraints/).
const (
	Contracted        = constraints.Contracted
	Batch             = constraints.Batch
	Free0             = constraints.Free0
	Free1             = constraints.Free1
	MaxAxes           = constraints.MaxAxes
	Tile              = constraints.Tile
	Chip              = constraints.Chip
	Cluster           = constraints.Cluster
	Slice             = constraints.Slice
	Time              = constraints.Time
	Row               = constraints.Row
	Packet            = constraints.Packet
	NumLevels         = constraints.NumLevels
	Single            = constraints.Single
	Dual              = constraints.Dual
	Half              = constraints.Half
	NumPacketModes    = constraints.NumPacketModes
	PacketContracted  = constraints.PacketContracted
	PacketColumns     = constraints.PacketColumns
	NumPacketContents = constraints.NumPacketContents
	BcastFetch        = constraints.BcastFetch
	BcastAlign        = constraints.BcastAlign
	NumBroadcasts     = constraints.NumBroadcasts
	LayoutHBM         = constraints.LayoutHBM
	LayoutCompute     = constraints.LayoutCompute
	LayoutCopy        = constraints.LayoutCopy
	NumLayouts        = constraints.NumLayouts
	AccInterleaved    = constraints.AccInterleaved
	AccSequential     = constraints.AccSequential
	NumAccumulations  = constraints.NumAccumulations
	TensorIn0         = constraints.TensorIn0
	TensorIn1         = constraints.TensorIn1
	TensorOut         = constraints.TensorOut
	NumTensors        = constraints.NumTensors
	StageSlices       = constraints.StageSlices
	StageStationary   = constraints.StageStationary
	StagePacket       = constraints.StagePacket
	StageRows         = constraints.StageRows
	StageTiles        = constraints.StageTiles
	StageOrder        = constraints.StageOrder
	StageDigits       = constraints.StageDigits
	DefaultMaxTiles   = constraints.DefaultMaxTiles
	RoleC             = constraints.RoleC
	RoleB             = constraints.RoleB
	RoleFX            = constraints.RoleFX
	RoleFW            = constraints.RoleFW
	NoAxis            = constraints.NoAxis
	DMAlign           = constraints.DMAlign
)

// Space is a workload's mapspace (constraints.Space) as the planners use
// it: with the kernel builder (Build) and the expression algebra's memo,
// and the builder telling the enumerator which DM layout choices build
// distinct programs (constraints.LayoutOracle).
type Space struct {
	*constraints.Space
	// memo caches the expression algebra of Build (memo.go).
	memo *exprMemo
	// hand, when set, makes the space a resident pair's einsum side: its
	// output stays in DM for the kernels after it (einsumres.go).
	hand *einsumHand
}

// NewSpace returns the mapspace of p.
func NewSpace(p *Problem, spec *engines.Spec) (*Space, error) {
	cs, err := constraints.NewSpace(p, spec)
	if err != nil {
		return nil, err
	}
	return wrap(cs, newExprMemo()), nil
}

// WithMaxTiles returns a copy of s whose tiled candidates have at most n
// tiles (s keeps its own bound); the copy shares the memo.
func (s *Space) WithMaxTiles(n int) *Space { return s.rewrap(s.Space.WithMaxTiles(n)) }

// WithSplitK returns a copy of s with split-K candidates or without
// (constraints.Space.WithSplitK); the copy shares the memo.
func (s *Space) WithSplitK(on bool) *Space { return s.rewrap(s.Space.WithSplitK(on)) }

// rewrap makes cs a planner's space sharing s's memo and handover.
func (s *Space) rewrap(cs *constraints.Space) *Space {
	n := wrap(cs, s.memo)
	n.hand = s.hand
	return n
}

// wrap makes cs a planner's space sharing memo.
func wrap(cs *constraints.Space, memo *exprMemo) *Space {
	s := &Space{Space: cs, memo: memo}
	cs.SetLayoutOracle(s)
	return s
}

// WithTileK returns a copy of s with K-chunked candidates or without
// (constraints.Space.WithTileK); the copy shares the memo.
func (s *Space) WithTileK(on bool) *Space { return s.rewrap(s.Space.WithTileK(on)) }

// WithClusterK returns a copy of s with candidates whose contracted axes
// split across the clusters or without (constraints.Space.WithClusterK);
// the copy shares the memo.
func (s *Space) WithClusterK(on bool) *Space { return s.rewrap(s.Space.WithClusterK(on)) }

// WithRowsOuter returns a copy of s with or without the candidates whose
// Row digits sit above their Time digits (constraints.Space.WithRowsOuter);
// the copy shares the memo.
func (s *Space) WithRowsOuter(on bool) *Space { return s.rewrap(s.Space.WithRowsOuter(on)) }

// WithDealsOut returns a copy of s with or without the candidates whose
// Slice digits sit below their Time digits
// (constraints.Space.WithDealsOut); the copy shares the memo.
func (s *Space) WithDealsOut(on bool) *Space { return s.rewrap(s.Space.WithDealsOut(on)) }

// WithClustersInner is constraints.Space.WithClustersInner, keeping the
// memo.
func (s *Space) WithClustersInner(on bool) *Space {
	return s.rewrap(s.Space.WithClustersInner(on))
}

// WithAllOrders is constraints.Space.WithAllOrders, keeping the memo.
func (s *Space) WithAllOrders(on bool) *Space { return s.rewrap(s.Space.WithAllOrders(on)) }
