package kernel

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// SwitchTopology names a Switch Engine topology: the variants of the
// Virtual ISA's SwitchConfig (002 L3058: "Forwarding, Broadcast01,
// Broadcast1, Transpose, InterTranspose, and Custom Topologies").
type SwitchTopology uint8

// The switch topologies. The zero value is not a topology.
const (
	// SwitchForwarding passes every slice's packets to its own output
	// (002 L3120-3138). The seed's API has no variant for it: a kernel skips
	// .switch() and calls collect() on the FetchTensor (002 L3122).
	SwitchForwarding SwitchTopology = iota + 1
	// SwitchBroadcast01 moves slice1 and slice0 from Slice to Time and tiles
	// them (002 L3139-3158): `Broadcast01 { slice1, slice0, time0 }`.
	SwitchBroadcast01
	// SwitchBroadcast1 moves slice1 from Slice to Time, keeping slice0
	// (002 L3218-3234): `Broadcast1 { slice1, slice0 }`.
	SwitchBroadcast1
	// SwitchTranspose swaps slice1 and slice0 inside Slice (002 L3255-3263):
	// `Transpose { slice1, slice0 }`.
	SwitchTranspose
	// SwitchInterTranspose swaps slice1 with time1 between Slice and Time
	// (002 L3285-3303): `InterTranspose { slice1, slice0, time0 }`.
	SwitchInterTranspose
	// SwitchCustomBroadcast routes by a snoop bitmap per slice written to
	// SFRs (002 L3332-3380): `CustomBroadcast { ring_size }`.
	SwitchCustomBroadcast
)

// switchVariants lists the topologies with their manual spelling and
// parameter names, in the order the manual's API writes the fields
// (002 L3197-3201, L3248-3251, L3277-3280, L3321-3325, L3377).
var switchVariants = []struct {
	t      SwitchTopology
	name   string
	fields []string
}{
	{SwitchForwarding, "Forwarding", nil},
	{SwitchBroadcast01, "Broadcast01", []string{"slice1", "slice0", "time0"}},
	{SwitchBroadcast1, "Broadcast1", []string{"slice1", "slice0"}},
	{SwitchTranspose, "Transpose", []string{"slice1", "slice0"}},
	{SwitchInterTranspose, "InterTranspose", []string{"slice1", "slice0", "time0"}},
	{SwitchCustomBroadcast, "CustomBroadcast", []string{"ring_size"}},
}

// String returns the manual's name of the topology, e.g. "Broadcast01", or
// "SwitchTopology(N)" for an invalid value.
func (t SwitchTopology) String() string {
	for _, v := range switchVariants {
		if v.t == t {
			return v.name
		}
	}
	return "SwitchTopology(" + strconv.Itoa(int(t)) + ")"
}

// Valid reports whether t is one of the defined topologies.
func (t SwitchTopology) Valid() bool { return t >= SwitchForwarding && t <= SwitchCustomBroadcast }

// Fields returns the parameter names of the topology's SwitchConfig
// variant, in the manual's order.
func (t SwitchTopology) Fields() []string {
	for _, v := range switchVariants {
		if v.t == t {
			return append([]string(nil), v.fields...)
		}
	}
	return nil
}

// ParseSwitchTopology reads a topology name as the manual spells it
// ("Broadcast01", "CustomBroadcast", ...). "Custom" is accepted for
// CustomBroadcast, the manual's section name (002 L3332).
func ParseSwitchTopology(s string) (SwitchTopology, error) {
	s = strings.TrimPrefix(strings.TrimSpace(s), "SwitchConfig::")
	if s == "Custom" {
		return SwitchCustomBroadcast, nil
	}
	for _, v := range switchVariants {
		if v.name == s {
			return v.t, nil
		}
	}
	names := make([]string, len(switchVariants))
	for i, v := range switchVariants {
		names[i] = v.name
	}
	return 0, fmt.Errorf("unknown switch topology %q (want %s)", s, strings.Join(names, ", "))
}

// MarshalText writes the topology's name.
func (t SwitchTopology) MarshalText() ([]byte, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("invalid switch topology %d", t)
	}
	return []byte(t.String()), nil
}

// UnmarshalText reads a topology name (see ParseSwitchTopology).
func (t *SwitchTopology) UnmarshalText(b []byte) error {
	v, err := ParseSwitchTopology(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// SwitchConfig is the Virtual ISA's `SwitchConfig` value: the topology and
// its parameters, exactly as the kernel writer passes them to
// `.switch(config)` (002 L3060-3076), e.g.
// `SwitchConfig::Broadcast01 { slice1: 256, slice0: 1, time0: 1 }`
// (002 L395-399). Parameters a topology does not take are zero.
type SwitchConfig struct {
	Topology SwitchTopology `json:"topology"`
	// Slice1 and Slice0 are the sizes of the Slice sub-dimensions slice1 and
	// slice0 (002 L3142, L3221, L3257, L3287); InSlice = [slice2, slice1,
	// slice0] with slice2 inferred by the compiler (002 L3143).
	Slice1 int `json:"slice1,omitempty"`
	Slice0 int `json:"slice0,omitempty"`
	// Time0 is the size of the innermost Time sub-dimension time0 of
	// Broadcast01 and InterTranspose (002 L3142, L3287).
	Time0 int `json:"time0,omitempty"`
	// RingSize is the ring size of a CustomBroadcast (002 L3377, L3364).
	RingSize int `json:"ring_size,omitempty"`
}

// field returns the value of the named parameter.
func (c SwitchConfig) field(name string) int {
	switch name {
	case "slice1":
		return c.Slice1
	case "slice0":
		return c.Slice0
	case "time0":
		return c.Time0
	case "ring_size":
		return c.RingSize
	}
	return 0
}

// String prints the configuration as the manual writes it:
// `SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }`
// (002 L3197-3201), `SwitchConfig::CustomBroadcast { ring_size: 256 }`
// (002 L3377) and `SwitchConfig::Forwarding` (no parameters).
func (c SwitchConfig) String() string { return "SwitchConfig::" + c.Variant() }

// Variant prints the configuration without the `SwitchConfig::` prefix,
// the form of a kernel program's switch stage parameter:
// `Broadcast01 { slice1: 256, slice0: 1, time0: 1 }`.
func (c SwitchConfig) Variant() string {
	var b strings.Builder
	b.WriteString(c.Topology.String())
	fs := c.Topology.Fields()
	if len(fs) == 0 {
		return b.String()
	}
	b.WriteString(" { ")
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f)
		b.WriteString(": ")
		b.WriteString(strconv.Itoa(c.field(f)))
	}
	b.WriteString(" }")
	return b.String()
}

// SwitchConfigError is a syntax error in a SwitchConfig literal, at a
// 1-based byte column.
type SwitchConfigError struct {
	Col int
	Msg string
}

// Error formats the error as `col 14: unknown field "slice2"`.
func (e *SwitchConfigError) Error() string { return fmt.Sprintf("col %d: %s", e.Col, e.Msg) }

// ParseSwitchConfig reads a SwitchConfig literal as the manual writes it,
// with or without the `SwitchConfig::` prefix:
//
//	SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }
//	Transpose { slice1: 32, slice0: 2 }
//	CustomBroadcast { ring_size: 32 }
//	Forwarding
//
// Every parameter of the variant must be given once, as a non-negative
// integer, and no other (a trailing comma is accepted, as in Rust). Whether
// the values suit the hardware is the engines' business. Errors are
// *SwitchConfigError with the column.
func ParseSwitchConfig(src string) (SwitchConfig, error) {
	p := &cfgParser{src: src}
	p.space()
	start := p.pos
	name := p.ident()
	if name == "SwitchConfig" && strings.HasPrefix(p.src[p.pos:], "::") {
		p.pos += 2
		start = p.pos
		name = p.ident()
	}
	if name == "" {
		return SwitchConfig{}, p.errAt(start, "want a switch topology name")
	}
	t, err := ParseSwitchTopology(name)
	if err != nil {
		return SwitchConfig{}, p.errAt(start, err.Error())
	}
	c := SwitchConfig{Topology: t}
	fields := t.Fields()
	p.space()
	if p.pos == len(p.src) {
		if len(fields) > 0 {
			return c, p.errAt(p.pos, fmt.Sprintf("%s needs { %s }", t, strings.Join(fields, ", ")))
		}
		return c, nil
	}
	if p.src[p.pos] != '{' {
		return c, p.errAt(p.pos, fmt.Sprintf("unexpected %q after %s", p.src[p.pos:p.pos+1], t))
	}
	p.pos++
	seen := map[string]bool{}
	for {
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			break
		}
		fpos := p.pos
		f := p.ident()
		if f == "" {
			return c, p.errAt(fpos, "want a field name or '}'")
		}
		if !slices.Contains(fields, f) {
			want := "no fields"
			if len(fields) > 0 {
				want = strings.Join(fields, ", ")
			}
			return c, p.errAt(fpos, fmt.Sprintf("unknown field %q of %s (want %s)", f, t, want))
		}
		if seen[f] {
			return c, p.errAt(fpos, fmt.Sprintf("field %q given twice", f))
		}
		seen[f] = true
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return c, p.errAt(p.pos, fmt.Sprintf("want ':' after %s", f))
		}
		p.pos++
		p.space()
		npos := p.pos
		for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
			p.pos++
		}
		if npos == p.pos {
			return c, p.errAt(npos, fmt.Sprintf("want a non-negative integer for %s", f))
		}
		v, err := strconv.Atoi(p.src[npos:p.pos])
		if err != nil || v > 1<<40 {
			return c, p.errAt(npos, fmt.Sprintf("%s value %s is too large", f, p.src[npos:p.pos]))
		}
		switch f {
		case "slice1":
			c.Slice1 = v
		case "slice0":
			c.Slice0 = v
		case "time0":
			c.Time0 = v
		case "ring_size":
			c.RingSize = v
		}
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == ',' {
			p.pos++
			continue
		}
		p.space()
		if p.pos < len(p.src) && p.src[p.pos] == '}' {
			p.pos++
			break
		}
		return c, p.errAt(p.pos, "want ',' or '}'")
	}
	for _, f := range fields {
		if !seen[f] {
			return c, p.errAt(p.pos, fmt.Sprintf("%s is missing field %s", t, f))
		}
	}
	p.space()
	if p.pos != len(p.src) {
		return c, p.errAt(p.pos, fmt.Sprintf("unexpected %q after the configuration", p.src[p.pos:]))
	}
	return c, nil
}

type cfgParser struct {
	src string
	pos int
}

func (p *cfgParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

func (p *cfgParser) ident() string {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || p.pos > start && c >= '0' && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos]
}

func (p *cfgParser) errAt(pos int, msg string) error {
	return &SwitchConfigError{Col: pos + 1, Msg: msg}
}

// SnoopSlices is the number of source slices a SnoopBitmap can name: one
// bit per slice of the 256-slice ring (002 L3057, L3095).
const SnoopSlices = 256

// SnoopBitmap is one output slice's snoop bitmap: "a bitmask specifying
// which source slices' packets to accept and output" (002 L3095). Bit s
// (word s/64, bit s%64) is source slice s. The accepted packets are output
// in ascending source order: axes moving from Slice to Time keep their
// input order (002 L3460, L3489-3491).
type SnoopBitmap [SnoopSlices / 64]uint64

// Set adds source slice s (0 ≤ s < 256; other values are ignored).
func (b *SnoopBitmap) Set(s int) {
	if s >= 0 && s < SnoopSlices {
		b[s/64] |= 1 << uint(s%64)
	}
}

// Has reports whether source slice s is accepted.
func (b SnoopBitmap) Has(s int) bool {
	return s >= 0 && s < SnoopSlices && b[s/64]&(1<<uint(s%64)) != 0
}

// Len is the number of accepted source slices.
func (b SnoopBitmap) Len() int {
	n := 0
	for _, w := range b {
		n += bits.OnesCount64(w)
	}
	return n
}

// Select returns the k-th accepted source slice in ascending order
// (k = 0 is the lowest), or -1 when fewer than k+1 are accepted. It does not
// allocate.
func (b SnoopBitmap) Select(k int) int {
	if k < 0 {
		return -1
	}
	for i, w := range b {
		n := bits.OnesCount64(w)
		if k >= n {
			k -= n
			continue
		}
		for ; k > 0; k-- {
			w &= w - 1
		}
		return i*64 + bits.TrailingZeros64(w)
	}
	return -1
}

// Slices returns the accepted source slices in ascending order.
func (b SnoopBitmap) Slices() []int {
	out := make([]int, 0, b.Len())
	for i, w := range b {
		for w != 0 {
			out = append(out, i*64+bits.TrailingZeros64(w))
			w &= w - 1
		}
	}
	return out
}

// String prints the accepted slices as the manual's bitmap tables do:
// `{0, 1, 16, 17}` (002 L3419). Runs of more than 16 consecutive slices
// print as `a..b` so that a full-ring bitmap stays readable.
func (b SnoopBitmap) String() string { return "{" + b.list(", ", "..", 16) + "}" }

// list prints the slices separated by sep, runs longer than maxRun as
// `a<dash>b`.
func (b SnoopBitmap) list(sep, dash string, maxRun int) string {
	s := b.Slices()
	var out strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if out.Len() > 0 {
			out.WriteString(sep)
		}
		if j-i+1 > maxRun {
			out.WriteString(strconv.Itoa(s[i]) + dash + strconv.Itoa(s[j]))
		} else {
			for k := i; k <= j; k++ {
				if k > i {
					out.WriteString(sep)
				}
				out.WriteString(strconv.Itoa(s[k]))
			}
		}
		i = j + 1
	}
	return out.String()
}

// MarshalText writes the bitmap as comma-separated slices and ranges,
// `0-3,16-19`; the empty bitmap is "".
func (b SnoopBitmap) MarshalText() ([]byte, error) { return []byte(b.list(",", "-", 1)), nil }

// UnmarshalText reads the form MarshalText writes.
func (b *SnoopBitmap) UnmarshalText(text []byte) error {
	*b = SnoopBitmap{}
	s := strings.TrimSpace(string(text))
	if s == "" {
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 || a >= SnoopSlices {
			return fmt.Errorf("snoop bitmap %q: bad slice %q (want 0..%d)", s, lo, SnoopSlices-1)
		}
		c := a
		if isRange {
			c, err = strconv.Atoi(hi)
			if err != nil || c < a || c >= SnoopSlices {
				return fmt.Errorf("snoop bitmap %q: bad range %q", s, part)
			}
		}
		for x := a; x <= c; x++ {
			b.Set(x)
		}
	}
	return nil
}

// SwitchRoute is the routing of a lowered switch: for every output slice its
// snoop bitmap (002 L3095) and where its packets' input time steps come from.
//
// Every topology delivers an output slice's packets in the same nested
// order, outermost first (002 L3154, L3233, L3300, L3472):
//
//	output time t' = [outer_time, outer_moved, inner_time, inner_moved]
//
// where the *_time digits walk input time steps and the *_moved digits walk
// the accepted source slices in ascending order; for Broadcast01 this is
// [time1, slice1, time0, slice0] (002 L3154). Output slice o, output time
// (a, b, c, d) carries the packet of source slice Bitmaps[o].Select(b ·
// InnerMoved + d) at input time TimeBase[o] + a · OuterTimeStride + c.
type SwitchRoute struct {
	// OuterTime, OuterMoved, InnerTime and InnerMoved are the digit sizes of
	// the output time walk, outermost first.
	OuterTime  int `json:"outer_time"`
	OuterMoved int `json:"outer_moved"`
	InnerTime  int `json:"inner_time"`
	InnerMoved int `json:"inner_moved"`
	// OuterTimeStride is the input-time step of one outer_time digit: the
	// inner_time size, or time1 · time0 for InterTranspose, which routes a
	// different time1 to each output slice (002 L3300).
	OuterTimeStride int `json:"outer_time_stride"`
	// TimeBase is the first input time step of each output slice; nil when
	// it is 0 for every slice (all topologies except InterTranspose).
	TimeBase []int `json:"time_base,omitempty"`
	// Bitmaps holds the snoop bitmap of each output slice; every bitmap
	// accepts OuterMoved · InnerMoved source slices.
	Bitmaps []SnoopBitmap `json:"bitmaps"`
}

// OutTime is the number of output time steps per slice: the product of
// the four digit sizes.
func (r *SwitchRoute) OutTime() int {
	return r.OuterTime * r.OuterMoved * r.InnerTime * r.InnerMoved
}

// Source returns the source slice and input time step of output slice o at
// output time tp, or ok false when o or tp is out of range. It does not
// allocate.
func (r *SwitchRoute) Source(o, tp int) (slice, time int, ok bool) {
	if o < 0 || o >= len(r.Bitmaps) || tp < 0 || r.InnerMoved <= 0 || r.InnerTime <= 0 || r.OuterMoved <= 0 || tp >= r.OutTime() {
		return 0, 0, false
	}
	d := tp % r.InnerMoved
	tp /= r.InnerMoved
	c := tp % r.InnerTime
	tp /= r.InnerTime
	b := tp % r.OuterMoved
	a := tp / r.OuterMoved
	slice = r.Bitmaps[o].Select(b*r.InnerMoved + d)
	time = a*r.OuterTimeStride + c
	if r.TimeBase != nil && o < len(r.TimeBase) {
		time += r.TimeBase[o]
	}
	return slice, time, slice >= 0
}

// BitmapRow is a run of consecutive output slices with identical snoop
// bitmaps: one row of the manual's bitmap tables (002 L3173-3181).
type BitmapRow struct {
	First, Last int
	Sources     SnoopBitmap
}

// String prints the row as `0-3: {0, 1, 2, 3}` (or `4: {4, 5, 6, 7}`).
func (r BitmapRow) String() string {
	if r.First == r.Last {
		return fmt.Sprintf("%d: %s", r.First, r.Sources)
	}
	return fmt.Sprintf("%d-%d: %s", r.First, r.Last, r.Sources)
}

// Rows groups the bitmaps into runs of identical consecutive rows.
func (r *SwitchRoute) Rows() []BitmapRow {
	var rows []BitmapRow
	for o, b := range r.Bitmaps {
		if n := len(rows); n > 0 && rows[n-1].Sources == b && rows[n-1].Last == o-1 {
			rows[n-1].Last = o
			continue
		}
		rows = append(rows, BitmapRow{First: o, Last: o, Sources: b})
	}
	return rows
}

// Switch is a lowered Switch Engine configuration: the kernel's
// SwitchConfig, the sub-dimension sizes the compiler infers, the ring
// structure, and the routes.
type Switch struct {
	Config SwitchConfig `json:"config"`
	// Slices is the number of input and output slices, InSlice::SIZE =
	// OutSlice::SIZE (002 L3502).
	Slices int `json:"slices"`
	// Slice2, Time1 and Time2 are the sub-dimension sizes the compiler
	// infers (002 L3143, L3222, L3288); zero where the topology has none.
	Slice2 int `json:"slice2,omitempty"`
	Time1  int `json:"time1,omitempty"`
	Time2  int `json:"time2,omitempty"`
	// RingSize is the number of slices in each independent ring (002 L3526);
	// the Slices / RingSize rings run in parallel (002 L3212, L3530-3532).
	RingSize int `json:"ring_size"`
	Rings    int `json:"rings"`
	// InTime is the input time dimension's size, input_time (002 L3526).
	InTime int `json:"in_time"`
	// PacketBytes is the packet size, unchanged by the switch (002 L3088).
	PacketBytes int `json:"packet_bytes"`
	// FlitBytes is the channel width: 32 bytes, 64 in dual channel mode
	// (002 L2125-2127).
	FlitBytes int `json:"flit_bytes"`
	// FlitsPerPacket is cycles_per_packet, the number of flits one packet
	// occupies (002 L3526), rounded up.
	FlitsPerPacket int `json:"flits_per_packet"`
	// Route is the routing of every output slice.
	Route SwitchRoute `json:"route"`
}

// String prints the configuration with its inferred sizes:
// `SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 } (slice2 = 64,
// time1 = 16, ring_size = 4)`.
func (s *Switch) String() string {
	var parts []string
	if s.Slice2 > 0 {
		parts = append(parts, "slice2 = "+strconv.Itoa(s.Slice2))
	}
	if s.Time2 > 0 {
		parts = append(parts, "time2 = "+strconv.Itoa(s.Time2))
	}
	if s.Time1 > 0 {
		parts = append(parts, "time1 = "+strconv.Itoa(s.Time1))
	}
	parts = append(parts, "ring_size = "+strconv.Itoa(s.RingSize))
	return s.Config.String() + " (" + strings.Join(parts, ", ") + ")"
}
