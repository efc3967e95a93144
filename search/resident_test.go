package search

import (
	"testing"

	"tcpmap/engines"
)

func TestPlanResidentDbg(t *testing.T) {
	for _, c := range []struct{ file, prod, cons, x string }{
		{"llama3-70b-decode.yaml", "silu", "swiglu", "gate_act"},
		{"attention-head.yaml", "causal", "softmax", "s_masked"},
	} {
		w := workloadFile(t, c.file)
		pr, err := PlanResident(w, findOp(w, c.prod), findOp(w, c.cons), c.x, engines.Default())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %v + %v (pairs %d) %s / %s", c.file, pr.Prod.Cost.Cycles, pr.Cons.Cost.Cycles, pr.Pairs, pr.Prod.Search.Resident, pr.Cons.Search.Resident)
		for _, op := range pr.Cons.Program.Handoff {
			t.Logf("cons handoff %s %s->%s", op.Kind, op.Src, op.Dst)
		}
	}
}
