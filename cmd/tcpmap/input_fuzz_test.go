package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"tcpmap/engines"
)

// FuzzParseInput: any bytes read as a kernel or a plan give a program that
// the validator then accepts or refuses, or an error naming the file;
// never a panic.
func FuzzParseInput(f *testing.F) {
	for _, p := range []string{goldenDot, goldenGEMV, "../../results/plans/dot.plan.json", "../../emit/testdata/manual/hello-dot.rs"} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(data)
		zw.Close()
		f.Add(data)
		f.Add(b.Bytes())
	}
	f.Add([]byte("[]"))
	f.Add([]byte(`{"version": 1}`))
	spec := engines.Default()
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := parseInput("f.in", data)
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "f.in"), "%v", err)
			return
		}
		require.NotNil(t, in.prog)
		if err := in.check(spec); err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "f.in"), "%v", err)
		}
	})
}
