package cost

import (
	"errors"
	"fmt"

	"tcpmap/engines"
)

// PCIeCycles prices an inter-chip transfer of n bytes over the PCIe link:
// pcie.bytes_per_cycle, 30 B/cycle for reads and writes (002 L2605,
// L2844-2847). A DMA between chips takes at least this long (002 L2596).
func PCIeCycles(spec *engines.Spec, n int) (int, error) {
	if spec == nil {
		return 0, errors.New("cost: PCIeCycles: nil spec")
	}
	if n < 0 || spec.PCIe.BytesPerCycle.Value <= 0 {
		return 0, fmt.Errorf("cost: PCIe transfer of %d bytes at %d B/cycle", n, spec.PCIe.BytesPerCycle.Value)
	}
	return ceilDiv(n, spec.PCIe.BytesPerCycle.Value), nil
}
