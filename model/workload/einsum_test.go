package workload

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The manual's contractions and their Broadcast / Reduce steps
// (002 L114-L120) and the batched matmul case study (002 L3710).
func TestEinsumClassification(t *testing.T) {
	for _, c := range []struct {
		src                     string
		inputs                  [][]string
		output                  []string
		contracted, batch, free []string
		broadcast0, broadcast1  []string
		str                     string
	}{
		// Dot product I, I -> 1: "none (axes match)", reduce over I (002 L114, L120).
		{"I,I->", [][]string{{"I"}, {"I"}}, []string{}, []string{"I"}, nil, nil, nil, nil, "I,I->"},
		// GEMV IJ, J -> I: x broadcasts across I (002 L115, L120).
		{"IJ, J -> I", [][]string{{"I", "J"}, {"J"}}, []string{"I"}, []string{"J"}, nil, []string{"I"}, nil, []string{"I"}, "IJ,J->I"},
		// GEMM IK, KJ -> IJ: A across J, B across I (002 L116, L120).
		{"IK,KJ->IJ", [][]string{{"I", "K"}, {"K", "J"}}, []string{"I", "J"}, []string{"K"}, nil, []string{"I", "J"}, []string{"J"}, []string{"I"}, "IK,KJ->IJ"},
		// VMK, VNK -> VMN: V batch, M and N output, K contraction (002 L3710).
		{"VMK,VNK->VMN", [][]string{{"V", "M", "K"}, {"V", "N", "K"}}, []string{"V", "M", "N"}, []string{"K"}, []string{"V"}, []string{"M", "N"}, []string{"N"}, []string{"M"}, "VMK,VNK->VMN"},
	} {
		e, err := ParseEinsum(c.src)
		require.NoError(t, err, c.src)
		assert.Equal(t, c.inputs, e.Inputs, c.src)
		assert.Equal(t, c.output, e.Output, c.src)
		assert.Equal(t, c.contracted, e.Contracted(), c.src)
		assert.Equal(t, c.batch, e.Batch(), c.src)
		assert.Equal(t, c.free, e.Free(), c.src)
		assert.Equal(t, c.broadcast0, e.Broadcast(0), c.src)
		assert.Equal(t, c.broadcast1, e.Broadcast(1), c.src)
		assert.Nil(t, e.Broadcast(2), c.src)
		assert.Equal(t, c.str, e.String(), c.src)
		again, err := ParseEinsum(e.String())
		require.NoError(t, err)
		assert.Equal(t, e, again, "String round-trips")
	}
}

func TestEinsumListForm(t *testing.T) {
	// The Llama 3 70B scores einsum (002 L8085): G broadcast from K_rope,
	// d_k reduced.
	e, err := NewEinsum([][]string{{"B", "G", "Hkv", "Sq", "Dk"}, {"B", "Hkv", "Sk", "Dk"}}, []string{"B", "G", "Hkv", "Sq", "Sk"})
	require.NoError(t, err)
	assert.Equal(t, []string{"Dk"}, e.Contracted())
	assert.Equal(t, []string{"B", "Hkv"}, e.Batch())
	assert.Equal(t, []string{"G", "Sq"}, e.Broadcast(1))
	assert.Equal(t, "B G Hkv Sq Dk, B Hkv Sk Dk -> B G Hkv Sq Sk", e.String())

	_, err = NewEinsum([][]string{{"A", "A"}, {"A"}}, []string{})
	var ee *EinsumError
	require.True(t, errors.As(err, &ee))
	assert.Equal(t, EinsumError{Operand: 0, Index: 1, Msg: "axis A repeated in input 0"}, *ee)
	_, err = NewEinsum([][]string{{"A"}, {"b"}}, []string{})
	require.True(t, errors.As(err, &ee))
	assert.Equal(t, 1, ee.Operand)
}

func TestEinsumErrors(t *testing.T) {
	for _, c := range []struct {
		src string
		col int
		msg string
	}{
		{"", 1, "empty einsum"},
		{"   ", 1, "empty einsum"},
		{"IK,KJ", 6, `missing "->" and output`},
		{"IK->I", 1, "an einsum takes 2 inputs (002 L110), got 1"},
		{"I,J,K->", 1, "an einsum takes 2 inputs (002 L110), got 3"},
		{"IK,KJ->II", 9, "axis I repeated in the output"},
		{"IIK,KJ->IJ", 2, "axis I repeated in input 0"},
		{"IK,KJ->IQ", 9, "output axis Q is in no input"},
		{"I K,KJ->IJ", 3, "space inside an operand"},
		{"IK,KJ->I J", 10, "space inside an operand"},
		{"IK,K1->I", 5, `unexpected '1'`},
		{"IK,Kj->I", 5, `lowercase 'j'`},
		{"IK,,->I", 4, "empty input operand"},
		{",->", 1, "empty input operand"},
		{"IK,KJ->IJ ;", 11, `unexpected ';'`},
		{"IK,KJ=>IJ", 6, `unexpected '='`},
	} {
		_, err := ParseEinsum(c.src)
		var ee *EinsumError
		if assert.True(t, errors.As(err, &ee), c.src) {
			assert.Equal(t, c.col, ee.Col, c.src)
			assert.Contains(t, ee.Msg, c.msg, c.src)
			assert.Contains(t, ee.Error(), "col ", c.src)
		}
	}
}

func FuzzParseEinsum(f *testing.F) {
	for _, s := range []string{"IK,KJ->IJ", "A,A->", "VMK,VNK->VMN", "I K,K->", "IK,,->", "->"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEinsum(s)
		if err != nil {
			var ee *EinsumError
			if !errors.As(err, &ee) || ee.Col < 1 || ee.Col > len(s)+1 {
				t.Fatalf("%q: bad error %v", s, err)
			}
			return
		}
		if again, err := ParseEinsum(e.String()); err != nil || len(again.Axes()) != len(e.Axes()) {
			t.Fatalf("%q: String %q does not round-trip: %v", s, e.String(), err)
		}
	})
}
