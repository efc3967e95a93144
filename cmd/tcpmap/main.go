// Command tcpmap plans, prices, emits and verifies mappings of tensor
// workloads onto FuriosaAI's Tensor Contraction Processor (RNGD).
//
// The command holds no logic of its own: each subcommand parses flags,
// calls the packages that do the work and formats their results as text or,
// with --json, as JSON.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
