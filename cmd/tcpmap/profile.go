package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// profFile is the open --cpuprofile file while the profile runs.
var profFile *os.File

// startProfile starts the CPU profile --cpuprofile asks for; the file is
// created before any work, so a bad path fails at once.
func startProfile(g *globals) error {
	if g.prof == "" || profFile != nil {
		return nil
	}
	f, err := os.Create(g.prof)
	if err != nil {
		return usageError{fmt.Errorf("--cpuprofile: %w", err)}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	profFile = f
	return nil
}

// stopProfile stops the profile (if one runs) and closes its file: after
// the command, whether it failed or not.
func stopProfile(*globals) error {
	if profFile == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := profFile.Close()
	profFile = nil
	if err != nil {
		return fmt.Errorf("--cpuprofile: %w", err)
	}
	return nil
}
