package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Fetch Engine cost (002 L1689-2144). Every slice runs the same sequencer on
// its own DM in lockstep, so one slice's cycles are the fetch's cycles; the
// Slice dimension of a mapping buys parallelism by shrinking Time
// (002 L2133). The 256 B/cycle of "Peak DM bandwidth ... with proper DMN
// interleaving" (002 L2133, L3788) is the DMN path of DMA requests, not a per-slice fetch
// limit: a slice reads at most one fetch_size (≤ 32 B) per cycle from its own
// 128 B/cycle banks (docs/spec-decisions.md "Fetch bandwidth").

// Channel is the Switch Engine channel mode (002 L2125-2127).
type Channel uint8

// The channel modes.
const (
	// Single channel: 32-byte flits, one Switch Engine per context.
	Single Channel = iota
	// Dual channel: main and sub combine into 64-byte flits; the sub
	// context is then unavailable (002 L2127, L2138-2142, L3052).
	Dual
)

// flitBytes returns the flit of a channel mode: stream.flit_bytes (32) or
// stream.dual_channel_flit_bytes (64) (002 L2125-2127).
func flitBytes(spec *engines.Spec, ch Channel) (int, error) {
	switch ch {
	case Single:
		return spec.Stream.FlitBytes.Value, nil
	case Dual:
		return spec.Stream.DualChannelFlitBytes.Value, nil
	}
	return 0, fmt.Errorf("cost: channel mode %d is neither Single nor Dual", ch)
}

// FetchCycles is the manual's fetch formula, #cycles = Time::SIZE ×
// ceil(Packet::SIZE / fetch_size) (002 L2060): steps packets of packet
// elements (or bytes), read fetch elements (or bytes, the same unit) at a
// time.
func FetchCycles(steps, packet, fetch int) (int, error) {
	if steps < 0 || packet <= 0 || fetch <= 0 {
		return 0, fmt.Errorf("cost: fetch of %d packets of %d, fetch_size %d", steps, packet, fetch)
	}
	return steps * ceilDiv(packet, fetch), nil
}

// FetchCost is the price of one fetch.
type FetchCost struct {
	// Cycles is the time the fetch occupies its slice's Fetch Engine: one DM
	// read of fetch_size per cycle, Steps × fetches_per_packet (002 L2060),
	// halved for multi-read packets in dual channel mode (002 L2140-2141).
	Cycles int
	// Reads is the number of DM reads; Bytes the bytes they read.
	Reads, Bytes int
	// Latency is the adapter's added latency: type conversion takes 1-2
	// cycles, priced at 2 (002 L2135). Batching's accumulation of
	// fetches_per_packet reads is part of Cycles.
	Latency int
	// Findings lists costs the manual names without numbers (table lookup,
	// 002 L1955-1959).
	Findings []Finding
}

// Fetch prices a lowered fetch. In dual channel mode a packet of several
// reads takes half the cycles, two reads per cycle ("Bandwidth doubles to 64
// bytes per cycle ... Fetch cycles halve for large transfers", 002
// L2138-2141); a packet of one read gains nothing (docs/spec-decisions.md
// "Fetch bandwidth").
func Fetch(spec *engines.Spec, cfg *kernel.FetchConfig, ch Channel) (FetchCost, error) {
	var c FetchCost
	if spec == nil || cfg == nil {
		return c, errors.New("cost: Fetch: nil spec or configuration")
	}
	if _, err := flitBytes(spec, ch); err != nil {
		return c, err
	}
	if cfg.Steps < 0 || cfg.FetchesPerPacket <= 0 || cfg.FetchSize <= 0 {
		return c, fmt.Errorf("cost: Fetch: %d steps, %d fetches per packet of %d bytes", cfg.Steps, cfg.FetchesPerPacket, cfg.FetchSize)
	}
	if ch == Dual && cfg.Context == kernel.CtxSub {
		return c, errors.New("cost: Fetch: dual channel mode takes the sub context's channel; a sub-context fetch cannot use it (002 L2142)")
	}
	per := cfg.FetchesPerPacket
	if ch == Dual {
		per = ceilDiv(per, 2)
	}
	c.Cycles = cfg.Steps * per
	c.Reads = cfg.Steps * cfg.FetchesPerPacket
	c.Bytes = c.Reads * cfg.FetchSize
	if cfg.Adapter.Cast || cfg.InType != cfg.OutType {
		lat := spec.Fetch.CastLatencyCycles.Value
		if len(lat) == 0 {
			return c, errors.New("cost: Fetch: spec has no fetch.cast_latency_cycles")
		}
		c.Latency = lat[len(lat)-1] // 1-2 cycles, the maximum (002 L2135)
	}
	if cfg.Adapter.Table {
		v := ruleTableLookup.Violate("fetch with table lookup: its latency and bandwidth overhead are not priced")
		c.Findings = append(c.Findings, Finding{Violation: v, Effect: Unpriced})
	}
	return c, nil
}

// FetchBanks measures the DM bank behaviour of a lowered fetch whose DM
// tensor starts at byte address base of every slice: the longest run of
// consecutive reads that touch one bank, and the bank-starvation hazard when
// the run reaches 64 (002 L2137, L2898). The walk stops at the limit.
func FetchBanks(spec *engines.Spec, cfg *kernel.FetchConfig, base int64) (BankRunResult, *Finding, error) {
	if spec == nil || cfg == nil {
		return BankRunResult{}, nil, errors.New("cost: FetchBanks: nil spec or configuration")
	}
	if cfg.FetchElems <= 0 {
		return BankRunResult{}, nil, fmt.Errorf("cost: FetchBanks: fetch of %d elements", cfg.FetchElems)
	}
	bits := cfg.InType.SizeBits()
	if bits <= 0 {
		return BankRunResult{}, nil, fmt.Errorf("cost: FetchBanks: element type %v", cfg.InType)
	}
	r, err := SeqBankRun(spec, &cfg.Seq, bits, cfg.FetchElems, base, spec.DM.BankStarvation.ConsecutiveAccessLimit.Value)
	if err != nil {
		return r, nil, err
	}
	return r, BankStarvation(spec, r.MaxRun, r.Bank), nil
}
