// Package kernel is the kernel program IR: the Virtual ISA chain as data
// (ops in program order, each in a DMA, main or sub context, over typed
// tensors that carry their mappings) and, once lowered, each engine's
// configuration as plain data (sequencer entries, switch routes,
// reg_read_size, ...).
//
// The configuration types live here rather than in package engines so that
// the IR can hold them without importing the hardware package: engines
// imports kernel and derives the configurations, checks their rules and runs
// their semantics; cost, verify and emit read them from the IR. Each
// engine's configuration type has its own file, named after the engine.
package kernel
