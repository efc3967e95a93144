package emit

import (
	"bytes"
	"encoding/json"
	"fmt"

	"tcpmap/model/kernel"
)

// JSON prints a kernel program in its JSON form (kernel.Program.MarshalJSON),
// indented by two spaces and ending in a newline. The program is validated
// first. The output is deterministic: struct fields in their declared
// order, no maps.
func JSON(p *kernel.Program) ([]byte, error) {
	if p == nil {
		return nil, fmt.Errorf("emit: nil program")
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return nil, fmt.Errorf("emit %q: %w", p.Name, err)
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
