package engines

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Rule is one named legality rule of an engine, as data: the planner turns
// it into clauses, `tcpmap explain` prints it, and every check that enforces
// it returns a *Violation naming it. Rules are declared once, at package
// level, with NewRule; the engine files own their rules.
type Rule struct {
	// ID is stable and unique, e.g. "SEQ-R1" (the catalog's name where the
	// catalog has one).
	ID string
	// Engine is the engine the rule belongs to: "sequencer", "fetch",
	// "commit", "dma", "switch", "collect", "aligner", "trf", "reducer",
	// "cast", "transpose", "memory".
	Engine string
	// Name is a short title, e.g. "entry limit".
	Name string
	// Cite names the manual lines that state the rule, e.g. "002 L1630".
	Cite string
	// Text states the rule as the manual does (paraphrased).
	Text string
}

// Violation is the typed error of a broken rule. Its message names the
// engine, what is wrong with the offending values, and the manual's line:
// `fetch: sequencer needs 9 entries after merging, limit 8 (002 L1630)`.
type Violation struct {
	Rule *Rule
	// Detail says what is wrong, with the offending values.
	Detail string
	// Values holds the offending values by name, for machine-readable output
	// and for turning the violation into a learned clause.
	Values []NamedValue
}

// NamedValue is one offending value of a Violation.
type NamedValue struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
}

// Error prints `engine: detail (cite)`.
func (v *Violation) Error() string {
	return fmt.Sprintf("%s: %s (%s)", v.Rule.Engine, v.Detail, v.Rule.Cite)
}

// Violate builds the Violation of r with a formatted detail message.
// Values may be attached with With.
func (r *Rule) Violate(format string, args ...any) *Violation {
	return &Violation{Rule: r, Detail: fmt.Sprintf(format, args...)}
}

// With attaches a named offending value and returns v.
func (v *Violation) With(name string, value int) *Violation {
	v.Values = append(v.Values, NamedValue{name, value})
	return v
}

var (
	rulesMu sync.Mutex
	rules   = map[string]*Rule{}
)

// NewRule registers a rule and returns it. It is meant for package-level
// variable declarations; a duplicate or incomplete rule is a programming
// error caught by TestRulesWellFormed, so NewRule records it rather than
// panicking.
func NewRule(r Rule) *Rule {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	p := &r
	if _, dup := rules[r.ID]; dup {
		p.ID = r.ID + "#duplicate"
	}
	rules[p.ID] = p
	return p
}

// Rules returns every registered rule, sorted by engine then ID.
func Rules() []*Rule {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	out := make([]*Rule, 0, len(rules))
	for _, r := range rules {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Engine != out[j].Engine {
			return out[i].Engine < out[j].Engine
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// RuleByID returns the rule with the given ID.
func RuleByID(id string) (*Rule, bool) {
	rulesMu.Lock()
	defer rulesMu.Unlock()
	r, ok := rules[id]
	return r, ok
}

// wellFormed reports what is missing from r, or "" when it is complete.
func (r *Rule) wellFormed() string {
	var miss []string
	if r.ID == "" || strings.HasSuffix(r.ID, "#duplicate") {
		miss = append(miss, "unique ID")
	}
	if r.Engine == "" {
		miss = append(miss, "engine")
	}
	if r.Name == "" {
		miss = append(miss, "name")
	}
	if !citeRE.MatchString(r.Cite) {
		miss = append(miss, "citation like \"002 L1630\"")
	}
	if r.Text == "" {
		miss = append(miss, "text")
	}
	return strings.Join(miss, ", ")
}
