package pos_test

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"tcpmap/model/mapping"
	"tcpmap/model/pos"
)

// A mapping expression's own error (mapping.SyntaxError: a column inside
// the m![...] string) becomes a positioned error at that character of the
// YAML file.
func ExampleInNode() {
	src := "name: gemm\nlayouts:\n  in0: m![K, Q]\n"
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		panic(err)
	}
	n := doc.Content[0].Content[3].Content[1] // the value of in0
	axes, _ := mapping.ParseAxes("K=8")
	_, err := mapping.Parse(n.Value, axes, nil)
	var se *mapping.SyntaxError
	if errors.As(err, &se) {
		err = pos.InNode("w.yaml", n, se.Col, "layouts.in0", se.Msg)
	}
	fmt.Println(err)
	// Output: w.yaml:3:14: layouts.in0: unknown axis "Q"
}

// A yaml.v3 syntax error, at its 1-based line: here the line where the
// unclosed flow mapping opens (yaml.v3 prints it 0-based, as line 1).
func ExampleYAML() {
	var doc yaml.Node
	err := yaml.Unmarshal([]byte("a: 1\nb: {x: 1\nc: 2\n"), &doc)
	fmt.Println(pos.YAML("w.yaml", err))
	// Output: w.yaml:2: yaml: did not find expected ',' or '}'
}
