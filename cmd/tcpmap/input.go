package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"tcpmap/emit/rustread"
	"tcpmap/engines"
	"tcpmap/model/kernel"
	"tcpmap/model/plan"
	"tcpmap/verify"
)

// input is a kernel program read from a file by `cost`, `verify`, `emit`
// and `regress`: a kernel program's JSON, a Rust kernel in the subset
// tcpmap emits, or a plan (tcpmap plan --out), each possibly
// gzip-compressed. The kind is told by the content, not the file name.
type input struct {
	path string
	// plan is the plan the program comes from (nil for a kernel).
	plan *plan.Plan
	prog *kernel.Program
	// src is the JSON text, to locate errors by line; nil for Rust.
	src *verify.Source
}

// maxInflated bounds the bytes a gzip-compressed input may inflate to.
const maxInflated = plan.MaxInflated

// gzipMagic starts a gzip stream (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// readInput reads path and tells its kind by content: gzip by its magic
// bytes; then JSON, an object, is a plan when it has a "version" or a
// "program" field and a kernel program otherwise; anything else is read
// as Rust. Errors name the file, and where they can the line.
func readInput(path string) (*input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return parseInput(path, data)
}

// parseInput is readInput of data read from path.
func parseInput(path string, data []byte) (*input, error) {
	if bytes.HasPrefix(data, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if data, err = io.ReadAll(io.LimitReader(zr, maxInflated+1)); err != nil {
			return nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		if len(data) > maxInflated {
			return nil, fmt.Errorf("%s: inflates beyond %d bytes", path, maxInflated)
		}
	}
	in := &input{path: path}
	body := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case len(body) == 0:
		return nil, fmt.Errorf("%s: empty file: want a kernel program (JSON or Rust) or a plan", path)
	case body[0] != '{' && body[0] != '[':
		p, err := rustread.Read(path, data)
		if err != nil {
			return nil, err
		}
		in.prog = p
		return in, nil
	}
	in.src = &verify.Source{Name: path, Data: data}
	var keys struct {
		Version json.RawMessage `json:"version"`
		Program json.RawMessage `json:"program"`
	}
	if err := json.Unmarshal(data, &keys); err != nil {
		return nil, in.src.Locate(err)
	}
	if keys.Version == nil && keys.Program == nil {
		p, _, err := verify.ParseKernel(path, data)
		if err != nil {
			return nil, err
		}
		in.prog = p
		return in, nil
	}
	pl, err := plan.Unmarshal(data)
	if err != nil {
		return nil, in.src.Locate(err)
	}
	in.plan, in.prog = pl, pl.Program
	return in, nil
}

// locate places an error about the program in the file: its line for JSON
// (under "program" for a plan), the file name for Rust.
func (in *input) locate(err error) error {
	if err == nil {
		return nil
	}
	if in.plan != nil {
		err = &kernel.FieldError{Path: "program", Err: err}
	}
	if in.src != nil {
		return in.src.Locate(err)
	}
	return fmt.Errorf("%s: %w", in.path, err)
}

// check runs the validator every command runs on what it reads
// (engines.Check): the program's structure, dataflow, addresses and
// footprint against the hardware spec in force.
func (in *input) check(spec *engines.Spec) error {
	return in.locate(engines.Check(spec, in.prog))
}

// loadProgram reads and checks one input: the program, and the plan it
// comes from (nil for a kernel).
func loadProgram(spec *engines.Spec, path string) (*input, error) {
	in, err := readInput(path)
	if err != nil {
		return nil, err
	}
	if err := in.check(spec); err != nil {
		return nil, err
	}
	return in, nil
}

// lowered returns a lowered copy of the program (the program itself stays
// as read), so that a command that does not run the program still refuses
// one that breaks an engine rule.
func (in *input) lowered(spec *engines.Spec) (*kernel.Program, error) {
	data, err := in.prog.MarshalJSON()
	if err != nil {
		return nil, in.locate(err)
	}
	var q kernel.Program
	if err := q.UnmarshalJSON(data); err != nil {
		return nil, in.locate(err)
	}
	if err := engines.Lower(spec, &q); err != nil {
		return nil, in.locate(err)
	}
	return &q, nil
}
