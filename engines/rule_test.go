package engines

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRulesWellFormed checks every rule any engine file declares: a unique
// ID, an engine, a name, a citation of the manual and its text.
func TestRulesWellFormed(t *testing.T) {
	for _, r := range Rules() {
		assert.Empty(t, r.wellFormed(), "rule %q", r.ID)
	}
}

func TestViolationMessage(t *testing.T) {
	r := &Rule{ID: "X-1", Engine: "fetch", Name: "entry limit", Cite: "002 L1630", Text: "at most 8 entries"}
	var err error = r.Violate("sequencer needs %d entries after merging, limit %d", 9, 8).With("entries", 9)
	assert.EqualError(t, err, "fetch: sequencer needs 9 entries after merging, limit 8 (002 L1630)")
	var v *Violation
	require.True(t, errors.As(err, &v))
	assert.Equal(t, []NamedValue{{"entries", 9}}, v.Values)
	assert.Same(t, r, v.Rule)
}
