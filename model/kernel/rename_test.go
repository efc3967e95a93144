package kernel

import "testing"

// TestRenameVRFRef: a vector op's VRF operand named in its Param (a group
// slot, `group(&y_vrf, GroupId::Zero)`) is renamed with the stage's tensor,
// a longer name sharing the prefix is not, and the renamed reference (a
// merged graph program's `OP.TENSOR`) still parses.
func TestRenameVRFRef(t *testing.T) {
	for _, c := range []struct{ param, from, to, want string }{
		{"BitOr, group(&y_vrf, GroupId::Zero)", "y_vrf", "grid.y_vrf", "BitOr, group(&grid.y_vrf, GroupId::Zero)"},
		{"AddFxp, [group(&y_vrf2, GroupId::Zero), group(&y_vrf, GroupId::One)]", "y_vrf", "g.y_vrf", "AddFxp, [group(&y_vrf2, GroupId::Zero), group(&g.y_vrf, GroupId::One)]"},
		{"AddFxp", "y_vrf", "g.y_vrf", "AddFxp"},
	} {
		if got := renameRef(c.param, c.from, c.to); got != c.want {
			t.Errorf("renameRef(%q, %q, %q) = %q, want %q", c.param, c.from, c.to, got, c.want)
		}
	}
	if _, err := ParseVeCall(StVectorLogic, "BitOr, group(&grid.y_vrf, GroupId::Zero)", "grid.y_vrf"); err != nil {
		t.Errorf("a qualified VRF name: %v", err)
	}
	for _, bad := range []string{"&.y", "&y.", "&a..b", "&@b", "&1a"} {
		if _, err := ParseVeCall(StVectorLogic, "BitOr, group("+bad+", GroupId::Zero)", bad[1:]); err == nil {
			t.Errorf("%q parsed as a VRF name", bad)
		}
	}
}
