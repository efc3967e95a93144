package digest

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBytes(t *testing.T) {
	// FIPS 180-4's SHA-256 of the empty message.
	assert.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", Bytes(nil))
	// And of "abc" (FIPS 180-2, appendix B.1).
	assert.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", Bytes([]byte("abc")))
}

func TestJSON(t *testing.T) {
	type point struct {
		M, N int
		Tags map[string]string
	}
	a, err := JSON(point{M: 1, N: 2, Tags: map[string]string{"b": "2", "a": "1"}})
	require.NoError(t, err)
	assert.Equal(t, Bytes([]byte(`{"M":1,"N":2,"Tags":{"a":"1","b":"2"}}`)), a, "the JSON encoding, map keys sorted")
	b, err := JSON(point{M: 1, N: 3})
	require.NoError(t, err)
	assert.NotEqual(t, a, b)

	_, err = JSON(make(chan int))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "chan int")
}
