package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"tcpmap/emit"
)

func init() {
	subcommands = append(subcommands, newEmitCmd)
}

// emittedFile is one file `tcpmap emit` wrote.
type emittedFile struct {
	Path  string `json:"path"`
	Lang  string `json:"lang"`
	Bytes int    `json:"bytes"`
}

// newEmitCmd is `tcpmap emit`: a kernel program as a Rust Virtual ISA
// kernel or as JSON.
func newEmitCmd(g *globals) *cobra.Command {
	var lang, out, apiName string
	cmd := &cobra.Command{
		Use:         "emit KERNEL.json|KERNEL.rs|PLAN.plan.json",
		Annotations: readsHW,
		Short:       "Write a kernel program as a Rust Virtual ISA kernel or as JSON",
		Long: `emit reads a kernel program (its JSON form, or a Rust kernel that tcpmap
emitted or that follows the manual's Hello kernels) and writes it to
DIR/<name>.rs (--lang rust) or DIR/<name>.json (--lang json), where name is
the program's name; it prints the path of each file written.

The Rust file has axes!, type aliases, a host program whose test compares the
kernel with a host oracle computed from the program's reference, and the
#[device(chip = N)] kernel with every type parameter spelled out, in the API of
one of the vendor's libraries (--api): visa-0.1 is furiosa-visa-std 0.1.0, the
manual's API (002 L175-525, the default); opt-0.6 is furiosa-opt-std 0.6.0, the
vendor's current library, which places tensors itself (the plan's placement is
kept in // tcpmap:place lines). Tensor names become snake_case identifiers,
each changed name recorded in a // tcpmap:name line. A program whose live
tensors overlap in memory, or that the chosen API cannot spell, is refused with
the op that cannot be written and why.

A plan (from tcpmap plan --out) emits its kernel program: as Rust with the
plan's predicted cost in the header, or with --lang json as the plan itself
(DIR/<name>.plan.json: workload, mapping, lowered program, cost).

The input is told apart by its content (gzip-compressed or not), and checked
as cost and verify check it: the whole plan, the program against the
hardware spec (--hw), and its engine rules on a lowered copy. --out is
checked before the input is read; each file is replaced atomically.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if lang != "rust" && lang != "json" {
				return usageError{fmt.Errorf("--lang %q: want rust or json", lang)}
			}
			api, err := emit.ParseAPI(apiName)
			if err != nil {
				return usageError{fmt.Errorf("--api: %w", err)}
			}
			if err := checkOutDir("--out", out); err != nil {
				return err
			}
			spec, err := loadSpec(g)
			if err != nil {
				return err
			}
			if gp, err := readGraphPlan(args[0]); err != nil || gp != nil {
				if err != nil {
					return err
				}
				if lang != "rust" {
					return usageError{fmt.Errorf("a graph plan emits --lang rust")}
				}
				return emitGraph(cmd.OutOrStdout(), g, args[0], gp, out, api) // graph_cmds.go
			}
			in, err := loadProgram(spec, args[0])
			if err != nil {
				return err
			}
			// Emit refuses what cost and verify refuse: the engine rules
			// too, checked on a lowered copy (the kernel prints as read).
			if _, err := in.lowered(spec); err != nil {
				return err
			}
			pl, p := in.plan, in.prog
			if !fileName(p.Name) {
				return fmt.Errorf("%s: kernel name %q cannot name a file", args[0], p.Name)
			}
			var data []byte
			ext := ".rs"
			switch {
			case lang == "rust":
				opts := emit.RustOptions{Version: Version, Spec: spec, API: api}
				if pl != nil {
					opts.Cost = fmt.Sprintf("%.0f cycles (%s model), bottleneck %s", pl.Cost.Cycles, pl.Cost.Model, pl.Cost.Bottleneck)
				}
				data, err = emit.Rust(p, opts)
			case pl != nil:
				ext = ".plan.json"
				data, err = pl.Marshal()
			default:
				ext = ".json"
				data, err = emit.JSON(p)
			}
			if err != nil {
				return in.locate(err)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			path := filepath.Join(out, p.Name+ext)
			if err := writeFile(path, data, 0o644); err != nil {
				return err
			}
			files := []emittedFile{{Path: path, Lang: lang, Bytes: len(data)}}
			if g.json {
				return writeJSON(cmd.OutOrStdout(), map[string]any{"files": files})
			}
			var b bytes.Buffer
			for _, f := range files {
				fmt.Fprintln(&b, f.Path)
			}
			_, err = cmd.OutOrStdout().Write(b.Bytes())
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&lang, "lang", "rust", "output language: rust or json")
	fl.StringVar(&out, "out", ".", "output `DIR` (created if missing)")
	fl.StringVar(&apiName, "api", string(emit.Visa01), "Rust `API`: visa-0.1 (furiosa-visa-std 0.1.0, the manual's) or opt-0.6 (furiosa-opt-std 0.6.0)")
	return cmd
}

// fileName reports whether a kernel's name can name the file emit writes:
// not empty, no path separator, not "." or "..", and printable (no control
// or format characters).
func fileName(name string) bool {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return false
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || r == utf8.RuneError {
			return false
		}
	}
	return true
}
