// Package cost is the analytical cost model: per-engine cycles, pipelines,
// overlap of the DMA, main and sub contexts, DM/HBM effects, hazards and the
// roofline, all from the engine and memory specs of the manual. It never
// changes a plan.
//
// This layer holds the per-engine cycle functions, each citing the manual's
// formula, with the hardware numbers taken from an *engines.Spec:
//
//   - fetch.go: FetchCycles (Time::SIZE × ceil(Packet::SIZE / fetch_size),
//     002 L2060), Fetch on a kernel.FetchConfig (dual channel, adapter
//     latency), FetchBanks (same-bank runs of the reads).
//   - switch.go: SwitchCycles (ring_size × input_time × flits per packet,
//     002 L3524), Switch with the custom-topology setup finding.
//   - collect.go: CollectCycles / Collect (flits, zero padding, waste).
//   - aligner.go: StreamAdapterCycles / StreamAdapter (flit and packet rates,
//     MAC utilization).
//   - trf.go: TRFRead (TRF cache, read-over-write stalls of SRAM-to-TRF),
//     TRFLoad (short command or full tensor unit path).
//   - reducer.go: ReducerCycles / Reducer (tree depth, temporal length, Rows).
//   - cast.go, transpose.go (double buffering), commit.go (writes per
//     commit_size, CommitBanks), pcie.go, vector.go (binary ops, split reduce,
//     inter-slice tail).
//   - dma.go, hbm.go, dm.go: DMAModel.EstimateDescriptors walks a DMA
//     command's actual request stream: 500-cycle startups, 256-byte requests,
//     each engine's two DMN ports in parallel, HBM channels through the
//     address bit mapping and channel XOR, row switches after FR-FCFS
//     batching, tCCD, read-modify-write, the 0.75 TB/s read and write caps,
//     DMN interleaving at 128 B/cycle per DMN; DMAModel.DMABound is its cheap
//     lower bound; DMBanks, SeqBankRun
//     (a BankRunResult) and BankStarvation give the 64-access bank-starvation
//     hazard.
//
// Cycle counts are steady-state occupancies at the core clock (1 GHz, the
// manual's assumption); latencies are reported separately. Effects the
// scheduler must act on, or that the manual names without a number, come
// back as Findings carrying the rule and its citation. Where the manual
// contradicts itself the choice is in docs/spec-decisions.md.
//
// Plain-number functions (FetchCycles, SwitchCycles, ...) serve the planner's
// hot path and the manual's worked examples; the functions taking kernel
// configuration types price lowered kernels. None allocates on success
// except to return findings.
package cost
