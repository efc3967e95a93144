package search

import (
	"os"
	"testing"

	"tcpmap/model/workload"
)

func TestPlanOpDebug(t *testing.T) {
	for _, f := range []string{"../workloads/attention-head.yaml", "../workloads/llama3-70b-decode.yaml"} {
		w, err := workload.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range w.Ops {
			if o.Kind == workload.KindEinsum {
				continue
			}
			r, err := PlanOp(w, o.Name, Options{})
			if err != nil {
				t.Logf("%s: %v", o.Name, err)
				continue
			}
			if r.Free {
				t.Logf("%s: free", o.Name)
				continue
			}
			t.Logf("%s: %v cycles roofline %.3f form %s %dx%d legal %d/%d %v", o.Name, r.Plan.Cost.Cycles, r.Plan.Cost.Roofline, r.Plan.OpMapping.Form, r.Plan.OpMapping.Clusters, r.Plan.OpMapping.Slices, r.Stats.Legal, r.Stats.Candidates, r.Stats.Rules())
		}
	}
}

func TestPlanOpDump(t *testing.T) {
	w, _ := workload.Load("../workloads/llama3-70b-decode.yaml")
	for _, name := range []string{"silu", "resid_attn", "softmax", "scale"} {
		r, err := PlanOp(w, name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := r.Plan.Marshal()
		os.WriteFile("/tmp/op-"+name+".plan.json", b, 0o644)
	}
	w, _ = workload.Load("../workloads/attention-head.yaml")
	for _, name := range []string{"softmax", "scale"} {
		r, err := PlanOp(w, name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := r.Plan.Marshal()
		os.WriteFile("/tmp/op-att-"+name+".plan.json", b, 0o644)
	}
}
