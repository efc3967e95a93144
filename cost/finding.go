package cost

import (
	"fmt"

	"tcpmap/engines"
)

// Effect says what a Finding asks of whoever schedules the priced operation.
type Effect uint8

// The effects of a finding.
const (
	// SerializeWithDMA: the operation must not run concurrently with a DMA
	// command; "the compiler schedules them as if they occupy DMA" (002
	// L2909, L2917, L2842).
	SerializeWithDMA Effect = iota + 1
	// PreemptDMAAndSub: setting the operation up preempts the DMA and sub
	// contexts (a custom switch topology writes its bitmap to SFRs, 002
	// L3533-3537).
	PreemptDMAAndSub
	// Unpriced: the manual names a cost but states no number for it, so the
	// estimate leaves it out.
	Unpriced
	// Penalty: the hardware only slows down, and the estimate includes the
	// slowdown (misaligned HBM or DM accesses, main/sub bank contention,
	// StoTRF stalls).
	Penalty
	// Invalid: the kernel breaks a rule the hardware does not tolerate
	// (capacity exceeded, live tensors overlapping); its estimate is not
	// meaningful.
	Invalid
)

// String names the effect.
func (e Effect) String() string {
	switch e {
	case SerializeWithDMA:
		return "serialize with DMA"
	case PreemptDMAAndSub:
		return "preempts DMA and sub context"
	case Unpriced:
		return "unpriced"
	case Penalty:
		return "priced penalty"
	case Invalid:
		return "invalid"
	}
	return fmt.Sprintf("Effect(%d)", uint8(e))
}

// Finding is something the cost model found that an estimate cannot simply
// add to its cycles: a hazard the scheduler must act on (a same-bank run that
// would starve the DMA Engine), or a cost the manual names without a number.
// It carries the rule it is about, with the rule's citation, and the values
// found, as an *engines.Violation does; Error prints `memory: … (002 L2898)`.
type Finding struct {
	*engines.Violation
	// Effect is what the finding asks of the scheduler.
	Effect Effect
}

// String prints the finding with its effect: `memory: … (002 L2898) [serialize with DMA]`.
func (f Finding) String() string {
	if f.Violation == nil {
		return "<nil finding> [" + f.Effect.String() + "]"
	}
	return f.Error() + " [" + f.Effect.String() + "]"
}

// The cost model's rules: hazards and performance statements the manual
// makes, registered with the engines' rules so that `tcpmap explain` and
// learned clauses see them.
var (
	// ruleBankRun is the 64-access rule of a single command (MEM-R1).
	ruleBankRun = engines.NewRule(engines.Rule{ID: "MEM-R1", Engine: "memory", Name: "bank starvation: consecutive same-bank accesses",
		Cite: "002 L2898, L2906, L2909, L2938-2939",
		Text: "Fetch and Commit must not access the same DM bank 64 or more consecutive times while DMA is active; such an operation is scheduled as if it occupied DMA"})
	// ruleBankCumulative is the cumulative form of the 64-access rule (MEM-R2).
	ruleBankCumulative = engines.NewRule(engines.Rule{ID: "MEM-R2", Engine: "memory", Name: "bank starvation: cumulative same-bank accesses",
		Cite: "002 L2913-2915, L2920-2926",
		Text: "the consecutive accesses of all concurrent main, sub and DMA commands to the same bank add up and must stay below 64"})
	// ruleCustomSetup is the configuration overhead of a custom switch topology.
	ruleCustomSetup = engines.NewRule(engines.Rule{ID: "SW-P1", Engine: "switch", Name: "custom topology setup",
		Cite: "002 L3533-3537",
		Text: "a custom topology preempts DMA and sub-context operations while its bitmap is written to Special Function Registers; the setup cycles are not stated"})
	// ruleShiftReuse is the unpriced latency of collect_flits = 3.
	ruleShiftReuse = engines.NewRule(engines.Rule{ID: "SA-P1", Engine: "aligner", Name: "shift-reuse latency",
		Cite: "002 L3956-3957",
		Text: "collect_flits = 3 (shift-reuse) introduces additional latency; the amount is not stated"})
	// ruleTableLookup is the unpriced overhead of fetch table indexing.
	ruleTableLookup = engines.NewRule(engines.Rule{ID: "FA-P5", Engine: "fetch", Name: "table lookup overhead",
		Cite: "002 L1955-1959",
		Text: "table indexing adds latency and may limit bandwidth while the table is accessed; no numbers are stated"})
)

// costRules lists the rules this package declares, for tests.
var costRules = []*engines.Rule{ruleBankRun, ruleBankCumulative, ruleCustomSetup, ruleShiftReuse, ruleTableLookup}
