package emit

import (
	"fmt"
	"math/bits"
	"strconv"
)

// hbmUnit is the 256 MiB unit in which the manual writes HBM addresses:
// `to_hbm(&mut ctx.pdma, 1 << 28)`, `result.to_hbm(&mut ctx.tdma, 2 << 28)`
// (002 L193, L265, L328, L361, L425, L463, L523).
const hbmShift = 28

// addrText prints a byte address the way the manual's kernels write them:
// 0; HBM addresses that are multiples of 256 MiB as `k << 28` (002 L361:
// `2 << 28`); other addresses with at least 8 trailing zero bits as
// `k << n` with k odd, so powers of two read `1 << 12` (002 L277, L297,
// L340, L359); anything else in decimal.
func addrText(v int64, hbm bool) string {
	switch {
	case v == 0:
		return "0"
	case v < 0:
		return strconv.FormatInt(v, 10)
	case hbm && v%(1<<hbmShift) == 0:
		return fmt.Sprintf("%d << %d", v>>hbmShift, hbmShift)
	}
	if tz := bits.TrailingZeros64(uint64(v)); tz >= 8 {
		return fmt.Sprintf("%d << %d", v>>tz, tz)
	}
	return strconv.FormatInt(v, 10)
}
