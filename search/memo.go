package search

import (
	"errors"
	"sync"

	"tcpmap/engines"
	"tcpmap/model/mapping"
)

// exprMemo caches mapping.Normalize by expression content (mapping caches
// Factorize itself: factorize reads that cache), and two answers per
// candidate's DM elements (differ, run). Candidates of one space share most
// of their expressions (an axis's digits, a tensor's layout). Entries are
// found by Hash and compared with Equal, so a colliding entry is never
// returned; expressions are immutable, so the cached results may be
// shared. Safe for concurrent use.
type exprMemo struct {
	mu   sync.Mutex
	norm map[uint64][]normEntry
	// differs caches layoutsDiffer by candidate (layouts, tile order and
	// buffering cleared) and tensor; runs caches computeRun by the same
	// key.
	differs map[differKey]bool
	runs    map[differKey]float64
}

type differKey struct {
	c Candidate
	t int
}

type normEntry struct{ in, out *mapping.Expr }

// maxMemoEntries bounds each cache; a full cache is emptied.
const maxMemoEntries = 1 << 16

func newExprMemo() *exprMemo {
	return &exprMemo{norm: map[uint64][]normEntry{}, differs: map[differKey]bool{}, runs: map[differKey]float64{}}
}

// normalize is mapping.Normalize(e), cached.
func (m *exprMemo) normalize(e *mapping.Expr) *mapping.Expr {
	if m == nil {
		return mapping.Normalize(e)
	}
	h := e.Hash()
	m.mu.Lock()
	for _, x := range m.norm[h] {
		if x.in.Equal(e) {
			m.mu.Unlock()
			return x.out
		}
	}
	m.mu.Unlock()
	out := mapping.Normalize(e)
	m.mu.Lock()
	if len(m.norm) >= maxMemoEntries {
		clear(m.norm)
	}
	m.norm[h] = append(m.norm[h], normEntry{in: e, out: out})
	m.mu.Unlock()
	return out
}

// factorize is mapping.FactorizeShared(e): mapping's cache, shared. The
// factors returned must not be modified.
func (m *exprMemo) factorize(e *mapping.Expr) (mapping.Factors, error) {
	return mapping.FactorizeShared(e)
}

// differ returns the cached answer for (c, t), or f's, cached.
func (m *exprMemo) differ(c Candidate, t int, f func() bool) bool {
	if m == nil {
		return f()
	}
	return memoized(m, m.differs, differKey{c, t}, f)
}

// run returns the cached run for (c, t), or f's, cached.
func (m *exprMemo) run(c Candidate, t int, f func() float64) float64 {
	if m == nil {
		return f()
	}
	return memoized(m, m.runs, differKey{c, t}, f)
}

// memoized returns cache[k], or f's answer stored there (under m's lock;
// a full cache is emptied).
func memoized[V any](m *exprMemo, cache map[differKey]V, k differKey, f func() V) V {
	m.mu.Lock()
	v, ok := cache[k]
	m.mu.Unlock()
	if ok {
		return v
	}
	v = f()
	m.mu.Lock()
	if len(cache) >= maxMemoEntries {
		clear(cache)
	}
	cache[k] = v
	m.mu.Unlock()
	return v
}

// orderFreeRules are the engines' rules whose verdict on a candidate does
// not depend on its digit orders (Candidate.Digits) or its DM layouts: the
// accumulator's capacities count the output's Time digits inner to the
// outermost reduced one (engines/reducer.go), each axis's Time digit has
// its Time factor whatever the order of the axis's other digits, and the
// main chain's Time is the computation's, whatever the DM addresses. Once
// one order and layout of a candidate is refused by one of them, every one
// is (TestOrderFreeRefusals).
var orderFreeRules = map[string]bool{"RED-R8": true, "RED-R9": true}

// refusalKey is c with its digit orders and DM layouts cleared.
func refusalKey(c *Candidate) Candidate {
	k := *c
	k.PlainOrders()
	k.Layout = [NumTensors]Layout{}
	return k
}

// refusals caches one search's refusals by a rule that reads neither the
// digit orders nor the DM layouts (orderFreeRules), keyed by the
// candidate with both cleared (refusalKey). It belongs to a search, not to
// its Space, and the branch and bound writes it only between chunks of
// bound evaluations, in the candidates' order (bnb.evaluateBounds): a
// refusal found in the cache is counted under the cached rule, where a
// fresh lowering may report an earlier stage's first, so the counts
// would otherwise depend on the searches run before on the same Space
// and on which worker lowered what first. The workers read it
// concurrently while nothing writes it.
type refusals struct {
	m map[Candidate]error
}

func newRefusals() *refusals { return &refusals{m: map[Candidate]error{}} }

// get returns the cached refusal of c's other orders and layouts.
func (r *refusals) get(c *Candidate) (error, bool) {
	if r == nil {
		return nil, false
	}
	err, ok := r.m[refusalKey(c)]
	return err, ok
}

// put caches err, c's refusal, when its rule is order-free.
func (r *refusals) put(c *Candidate, err error) {
	var v *engines.Violation
	if r == nil || !errors.As(err, &v) || !orderFreeRules[v.Rule.ID] {
		return
	}
	if len(r.m) >= maxMemoEntries {
		clear(r.m)
	}
	r.m[refusalKey(c)] = err
}
