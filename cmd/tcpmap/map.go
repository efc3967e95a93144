package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"tcpmap/model/mapping"
)

func init() {
	subcommands = append(subcommands, newMapCmd)
}

// newMapCmd is `tcpmap map`: evaluate, normalize and compare mapping
// expressions (model/mapping).
func newMapCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "map",
		Short: "Evaluate, normalize and compare m![...] mapping expressions",
		Long: `map works on mapping expressions (the m![...] language of the manual's
"Mapping Expressions" page). Axes are declared with --axes, e.g.
--axes A=8,B=512 (skewed axes as B'=B-A). EXPR is the text inside m![...] or
the whole m![...].`,
	}
	cmd.AddCommand(newMapEvalCmd(g), newMapNormCmd(g), newMapEquivCmd(g))
	return cmd
}

// mapInput parses --axes and the expressions, printing a caret diagram for
// a parse error.
type mapInput struct {
	g    *globals
	axes string
}

func (in *mapInput) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&in.axes, "axes", "", "axis declarations `A=8,B=512` (skewed: B'=B-A)")
}

// parse returns the axes and expressions, or an error already reported.
func (in *mapInput) parse(cmd *cobra.Command, srcs ...string) (mapping.Axes, []*mapping.Expr, error) {
	axes, err := mapping.ParseAxes(in.axes)
	if err != nil {
		return axes, nil, in.report(cmd, "--axes", in.axes, err)
	}
	var es []*mapping.Expr
	for _, src := range srcs {
		e, err := mapping.Parse(src, axes, nil)
		if err != nil {
			return axes, nil, in.report(cmd, "expression", src, err)
		}
		es = append(es, e)
	}
	return axes, es, nil
}

// report prints a parse error with the source and a caret under its
// column (JSON with --json) and returns exitError{1}.
func (in *mapInput) report(cmd *cobra.Command, what, src string, err error) error {
	var se *mapping.SyntaxError
	col := 0
	if errors.As(err, &se) {
		col = se.Col
	}
	if in.g.json {
		if werr := writeJSON(cmd.OutOrStdout(), map[string]any{"error": err.Error(), "input": what, "source": src, "col": col}); werr != nil {
			return werr
		}
		return exitError{exitFail}
	}
	w := cmd.ErrOrStderr()
	fmt.Fprintf(w, "tcpmap: %s: %v\n", what, err)
	if col > 0 {
		fmt.Fprintf(w, "  %s\n  %s^\n", src, caretPad(src, col))
	}
	return exitError{exitFail}
}

// caretPad is the indentation that puts a caret under byte column col,
// keeping tabs so that it lines up.
func caretPad(src string, col int) string {
	var b strings.Builder
	for i := 0; i < col-1 && i < len(src); i++ {
		if src[i] == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// cellJSON is the JSON form of a cell.
type cellJSON struct {
	Kind  string         `json:"kind"`            // live, padding, out of bounds
	Index map[string]int `json:"index,omitempty"` // live: axis → coordinate (0 omitted)
	Pad   string         `json:"pad,omitempty"`   // padding: Top, Bottom, Zero
	Text  string         `json:"text"`            // as printed in text mode
}

func toCellJSON(c mapping.Cell) cellJSON {
	out := cellJSON{Text: c.String()}
	switch c.Kind {
	case mapping.Live:
		out.Kind = "live"
		out.Index = map[string]int{}
		for _, co := range c.Index.Coords() {
			out.Index[co.Axis] = co.Value
		}
	case mapping.Pad:
		out.Kind = "padding"
		out.Pad = c.Pad.String()
	case mapping.OOB:
		out.Kind = "out of bounds"
	default:
		out.Kind = "several"
	}
	return out
}

func newMapEvalCmd(g *globals) *cobra.Command {
	in := &mapInput{g: g}
	cmd := &cobra.Command{
		Use:   "eval EXPR POSITION",
		Short: "Print the tensor index a buffer position holds",
		Long: `eval prints what buffer POSITION of EXPR holds: a tensor index such as
{B: 97} (coordinates 0 omitted), or "padding (Top)". A position outside the
buffer is an error (exit 1). For a linear combination $(...) every index the
position holds is printed, one per line. With skewed axes the index is also
shown over the base axes.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			pos, err := strconv.Atoi(args[1])
			if err != nil {
				return usageError{fmt.Errorf("position %q is not an integer", args[1])}
			}
			axes, es, err := in.parse(cmd, args[0])
			if err != nil {
				return err
			}
			e := es[0]
			if pos < 0 || pos >= e.Size() {
				return fmt.Errorf("position %d is out of bounds of %s (size %d)", pos, e.Text(), e.Size())
			}
			cells := e.MapAll(pos)
			var unskewed []string
			if len(axes.Skews()) > 0 {
				for _, c := range cells {
					if c.Kind == mapping.Live {
						u, err := axes.Unskew(c.Index, e)
						if err != nil {
							return err
						}
						unskewed = append(unskewed, u.String())
					}
				}
			}
			if g.json {
				js := make([]cellJSON, len(cells))
				for i, c := range cells {
					js[i] = toCellJSON(c)
				}
				out := map[string]any{"expr": e.Text(), "size": e.Size(), "position": pos, "cells": js}
				if unskewed != nil {
					out["unskewed"] = unskewed
				}
				return writeJSON(cmd.OutOrStdout(), out)
			}
			w := cmd.OutOrStdout()
			for i, c := range cells {
				if i < len(unskewed) && unskewed[i] != c.String() {
					fmt.Fprintf(w, "%v = %s\n", c, unskewed[i])
				} else {
					fmt.Fprintln(w, c)
				}
			}
			return nil
		},
	}
	in.addFlags(cmd)
	return cmd
}

func newMapNormCmd(g *globals) *cobra.Command {
	in := &mapInput{g: g}
	cmd := &cobra.Command{
		Use:   "norm EXPR",
		Short: "Print the normal form of a mapping expression",
		Long: `norm prints the canonical spelling of EXPR (equivalent factorizable
expressions print identically). With --json it also gives the factorized form,
innermost factor first.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, es, err := in.parse(cmd, args[0])
			if err != nil {
				return err
			}
			e := es[0]
			n := mapping.Normalize(e)
			if g.json {
				out := map[string]any{"expr": e.Text(), "normal": n.Text(), "size": e.Size()}
				fs, ferr := mapping.Factorize(e)
				if ferr != nil {
					out["factorizable"] = false
					out["reason"] = ferr.Error()
				} else {
					out["factorizable"] = true
					out["factors"] = factorsJSON(fs)
				}
				return writeJSON(cmd.OutOrStdout(), out)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), n.Text())
			return err
		},
	}
	in.addFlags(cmd)
	return cmd
}

func factorsJSON(fs mapping.Factors) []map[string]any {
	out := make([]map[string]any, len(fs))
	for i, f := range fs {
		m := map[string]any{"kind": f.Kind.String(), "extent": f.Extent}
		switch f.Kind {
		case mapping.FactorTerm:
			m["axis"], m["axis_size"], m["stride"] = f.Axis, f.AxisSize, f.Stride
		case mapping.FactorPad:
			m["pad"] = f.Pad.String()
		}
		out[i] = m
	}
	return out
}

func newMapEquivCmd(g *globals) *cobra.Command {
	in := &mapInput{g: g}
	var loose bool
	cmd := &cobra.Command{
		Use:   "equiv EXPR1 EXPR2",
		Short: "Decide whether two mapping expressions are equivalent",
		Long: `equiv exits 0 and prints "equivalent" when EXPR1 and EXPR2 have the same
size and map every position to the same cell (padding kinds included, unless
--loose). Otherwise it exits 1 and prints the first position where they differ
and what each side holds there.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, es, err := in.parse(cmd, args[0], args[1])
			if err != nil {
				return err
			}
			a, b := es[0], es[1]
			ok, at, err := mapping.EquivLimit(a, b, loose, mapEnumLimit)
			if err != nil {
				return fmt.Errorf("equiv: %s and %s: %w; their canonical factorizations do not decide it (one does not factorize, or holds a linear combination)", a.Text(), b.Text(), err)
			}
			w := cmd.OutOrStdout()
			if g.json {
				out := map[string]any{"equivalent": ok, "left": a.Text(), "right": b.Text()}
				if !ok && at >= 0 {
					out["position"] = at
					out["left_cell"] = toCellJSON(firstCell(a, at))
					out["right_cell"] = toCellJSON(firstCell(b, at))
				}
				if err := writeJSON(w, out); err != nil {
					return err
				}
			} else if ok {
				fmt.Fprintln(w, "equivalent")
			} else {
				printDiff(w, a, b, at)
			}
			if !ok {
				return exitError{exitFail}
			}
			return nil
		},
	}
	in.addFlags(cmd)
	cmd.Flags().BoolVar(&loose, "loose", false, "treat all padding kinds as equal")
	return cmd
}

// mapEnumLimit bounds the positions `map equiv` enumerates when the
// canonical factorizations do not decide (about a second of work, 10 ns
// per position and node, model/mapping Equiv).
const mapEnumLimit = 1 << 26

// firstCell is the cell of e at position i (the first of several for a
// linear combination).
func firstCell(e *mapping.Expr, i int) mapping.Cell { return e.MapAll(i)[0] }

func printDiff(w io.Writer, a, b *mapping.Expr, at int) {
	if at < 0 {
		fmt.Fprintf(w, "not equivalent: their canonical factorizations differ; the first difference lies beyond position %d\n", mapEnumLimit)
		return
	}
	fmt.Fprintf(w, "not equivalent: first difference at position %d\n", at)
	if a.Size() != b.Size() {
		fmt.Fprintf(w, "  sizes: %d vs %d\n", a.Size(), b.Size())
	}
	fmt.Fprintf(w, "  %s: %v\n", a.Text(), firstCell(a, at))
	fmt.Fprintf(w, "  %s: %v\n", b.Text(), firstCell(b, at))
}
