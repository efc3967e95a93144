// Package racerun selects the tests a package runs under the race
// detector in make test's race run, and checks such a selection against
// the tests the package declares.
//
// make test runs the race-tested packages in one `go test -race`
// command, so that their runs overlap on the machine's cores. A -run
// there would apply to every package alike; each package's TestMain
// instead calls Select with its own pattern, and the package's other
// tests run without the detector (the Makefile's unit-norace).
package racerun

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Main is a race-tested package's TestMain: it parses the flags, selects
// pattern when race (the package's build runs the race detector) and the
// command line names no tests, runs the tests and exits with their
// status.
func Main(m *testing.M, race bool, pattern string) {
	flag.Parse()
	if race {
		if err := Select(pattern); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}

// Select sets the test binary's -test.run to pattern when the command
// line names no tests itself. Call it from TestMain after flag.Parse.
func Select(pattern string) error {
	f := flag.Lookup("test.run")
	if f == nil {
		return fmt.Errorf("racerun: no -test.run flag: call Select from TestMain after flag.Parse")
	}
	if f.Value.String() != "" {
		return nil
	}
	return f.Value.Set(pattern)
}

var namesPattern = regexp.MustCompile(`^\^\(([^)]*)\)\$$`)

// Names returns the test names of a selection written ^(TestA|TestB)$.
func Names(pattern string) ([]string, error) {
	m := namesPattern.FindStringSubmatch(pattern)
	if m == nil || m[1] == "" {
		return nil, fmt.Errorf("racerun: %q is not ^(TestA|TestB)$", pattern)
	}
	return strings.Split(m[1], "|"), nil
}

var testFunc = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)

// Undeclared returns the names of pattern that no _test.go file of dir
// declares as a test function.
func Undeclared(pattern, dir string) ([]string, error) {
	names, err := Names(pattern)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, d := range testFunc.FindAllSubmatch(src, -1) {
			declared[string(d[1])] = true
		}
	}
	var missing []string
	for _, n := range names {
		if !declared[n] {
			missing = append(missing, n)
		}
	}
	return missing, nil
}
