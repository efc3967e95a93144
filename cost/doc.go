// Package cost is the analytical cost model: per-engine cycles, pipelines,
// overlap of the DMA, main and sub contexts, DM/HBM effects, hazards and the
// roofline, all from the engine and memory specs of the manual. It never
// changes a plan.
package cost
