package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
	"tcpmap/model/kernel"
)

// Commit Engine cost (002 L2145-2353).

// CommitCycles prices steps packets whose commitInSize leading bytes are
// written to DM in commitSize chunks, one write per cycle:
// Time::SIZE × commit_in_size / commit_size writes (002 L2243-2246; the
// kernel examples count one write per cycle, 002 L7695, L7755-7756). The
// adapter's truncation is "nearly zero cost" (002 L2349).
func CommitCycles(steps, commitInSize, commitSize int) (int, error) {
	if steps < 0 || commitInSize <= 0 || commitSize <= 0 || commitInSize%commitSize != 0 {
		return 0, fmt.Errorf("cost: commit of %d packets of %d bytes in %d-byte writes", steps, commitInSize, commitSize)
	}
	return steps * (commitInSize / commitSize), nil
}

// Commit prices a lowered commit.
func Commit(c *kernel.CommitConfig) (int, error) {
	if c == nil {
		return 0, errors.New("cost: Commit: nil configuration")
	}
	n, err := CommitCycles(c.Steps, c.CommitInSize, c.CommitSize)
	if err == nil && c.WritesPerStep != c.CommitInSize/c.CommitSize {
		return 0, fmt.Errorf("cost: Commit: %d writes per step, commit_in_size / commit_size = %d", c.WritesPerStep, c.CommitInSize/c.CommitSize)
	}
	return n, err
}

// CommitBanks measures the DM bank behaviour of a lowered commit whose DM
// tensor starts at byte address base of every slice: the longest run of
// consecutive writes to one bank and the bank-starvation hazard when it
// reaches 64 (002 L2350-2352, L2898). The walk stops at the limit.
func CommitBanks(spec *engines.Spec, c *kernel.CommitConfig, base int64) (BankRunResult, *Finding, error) {
	if spec == nil || c == nil {
		return BankRunResult{}, nil, errors.New("cost: CommitBanks: nil spec or configuration")
	}
	bits := c.DType.SizeBits()
	if bits <= 0 || c.CommitSize*8%bits != 0 {
		return BankRunResult{}, nil, fmt.Errorf("cost: CommitBanks: %d-byte writes of %v", c.CommitSize, c.DType)
	}
	r, err := SeqBankRun(spec, &c.Seq, bits, c.CommitSize*8/bits, base, spec.DM.BankStarvation.ConsecutiveAccessLimit.Value)
	if err != nil {
		return r, nil, err
	}
	return r, BankStarvation(spec, r.MaxRun, r.Bank), nil
}
