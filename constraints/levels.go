package constraints

// The one table of which levels each axis role may take. Space.Check, the
// enumerator and the SAT encoding (and through it explain and the unsat
// cores of Infeasible) read it; a new placement (a contracted axis split
// across slices, say) is a change of this table and of what the builder
// makes of it, not of four copies of the rule.

// levelUse says when an axis of a role may take a factor other than 1 at a
// level.
type levelUse uint8

const (
	// never: the level is closed to the role.
	never levelUse = iota
	// always: the level is open whatever the packet holds.
	always
	// withColumns: only when the packet holds columns (PacketColumns).
	withColumns
	// withContracted: only when the packet holds contracted axes
	// (PacketContracted), or with either content where the space reduces
	// partially (Space.PartialReduce: a packet of columns then holds
	// contracted axes innermost, 002 L4392).
	withContracted
	// whenSplit: only where the space splits contracted axes across
	// slices (Space.SplitK: the Inter-Slice Block adds the slices' partial
	// sums, 002 L6583-6755).
	whenSplit
	// whenTiledK: only where the space tiles contracted axes (Space.TileK:
	// each K chunk's partial sums go to DM and the Vector Engine adds them,
	// the manual's split reduce, 002 L7151-7177).
	whenTiledK
	// whenClusterK: only where the space splits contracted axes across
	// the clusters (Space.ClusterK: each cluster contracts its share into
	// partial sums and the cluster reduce adds them, a DMA between the
	// clusters' DMs and the Vector Engine, 002 L7382-7610).
	whenClusterK
)

// roleLevels is the table, by role and level (002 L104-120: an einsum's
// contracted axes are reduced, its output axes spread; L129-132, L147: the
// levels).
//
//   - Contracted axes are reduced by the Reducer's tree (Packet, 002 L4384-
//     4392) and accumulator (Time, 002 L4447-4492), and across the slices
//     of a cluster by the Vector Engine's Inter-Slice Block (Slice, 002
//     L6583-6755, L7073-7080: split-K), and across the clusters by the
//     cluster reduce (Cluster: a DMA between the clusters' DMs, then
//     the Vector Engine adds the two partial sums, 002 L7382-7610,
//     ClusterK); Row is the TRF's output axis (002 L4100-4105).
//   - Batch axes and the streamed operand's free axes spread over Cluster,
//     Slice and Time, and fill a packet of columns (002 L3721-3734).
//   - The stationary operand's free axes spread over Cluster, Slice, Time
//     and the TRF's Rows (002 L4100-4105, L4162-4167); its weights are read
//     one per Row, never as packet lanes.
//
// Tile loops run over output axes, and over contracted axes where the
// space tiles them (TileK): the accumulator holds one chunk's sums
// (002 L4447-4492), so each K chunk commits its f32/i32 partial sums to DM
// and a split reduce adds them (interleaved fetch and a Vector Engine
// binary op, 002 L7151-7177). Chip is open to every role and held at 1 by
// Check: one chip is mapped.
var roleLevels = [NumRoles][NumLevels]levelUse{
	RoleC:  {Tile: whenTiledK, Chip: always, Cluster: whenClusterK, Slice: whenSplit, Time: always, Packet: withContracted},
	RoleB:  {Tile: always, Chip: always, Cluster: always, Slice: always, Time: always, Packet: withColumns},
	RoleFX: {Tile: always, Chip: always, Cluster: always, Slice: always, Time: always, Packet: withColumns},
	RoleFW: {Tile: always, Chip: always, Cluster: always, Slice: always, Time: always, Row: always},
}

// opens reports whether a role may take a factor at level l with the
// packet's content k in space s.
func (s *Space) opens(r Role, l Level, k PacketContent) bool {
	switch roleLevels[r][l] {
	case always:
		return true
	case withColumns:
		return k == PacketColumns
	case withContracted:
		return k == PacketContracted || s.partial
	case whenSplit:
		return s.splitK
	case whenTiledK:
		return s.tileK
	case whenClusterK:
		return s.clusterK
	}
	return false
}

// rolesOf lists the roles an axis of class cl can take: a free axis is the
// stationary operand's or the streamed one's, as the stationary choice
// falls.
func rolesOf(cl Class) []Role {
	switch cl {
	case Contracted:
		return []Role{RoleC}
	case Batch:
		return []Role{RoleB}
	}
	return []Role{RoleFX, RoleFW}
}

// mayTake reports whether axis a may take a factor at level l under some
// stationary choice and packet content: the axes the enumerator places at
// l before those are chosen.
func (s *Space) mayTake(a int, l Level) bool {
	for _, r := range rolesOf(s.P.Axes[a].Class) {
		switch roleLevels[r][l] {
		case never:
		case whenSplit:
			if s.splitK {
				return true
			}
		case whenTiledK:
			if s.tileK {
				return true
			}
		case whenClusterK:
			if s.clusterK {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// roleClauses adds the table's clauses for the literal at, which places a
// unit of an axis of role r at level l, under rule rule: each clause also
// holds the literals of unless, so that it binds only when the role
// applies (a free axis is FW only when its operand is stationary). cols is
// the packet-of-columns literal.
func (s *Space) roleClauses(c *Formula, rule Lit, r Role, l Level, at, cols Lit, unless ...Lit) {
	clause := func(lits ...Lit) {
		c.Clause(rule, append(append([]Lit{at.Not()}, lits...), unless...)...)
	}
	switch roleLevels[r][l] {
	case never:
		clause()
	case withColumns:
		clause(cols)
	case withContracted:
		if !s.partial {
			clause(cols.Not())
		}
	case whenSplit:
		if !s.splitK {
			clause()
		}
	case whenTiledK:
		if !s.tileK {
			clause()
		}
	case whenClusterK:
		if !s.clusterK {
			clause()
		}
	}
}
