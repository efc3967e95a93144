# tcpmap — see README.md.
GO       ?= go
FUZZTIME ?= 30s
PKGS     := ./...
# The suites run after `vet` (go vet ./..., every analyzer over every
# package), so go test's own vet pass — a subset of the analyzers, run over
# every dependency for their facts — would repeat it: about 50 s of a
# cold build on 2 cores, race and plain. The timeout is twice go test's
# default: the search package's run without the race detector took 139 s
# of a cold make test on the 2-core machine (session 31; up to 4 minutes
# when the machine is loaded), and a machine twice as slow must not fail
# it for the clock alone. GOGC=400: the search package's tests
# spent 40 % of their CPU in the collector at the default 100 (its norace
# group: 288 s of CPU at 100, 199 s at 200, 171 s at 400, peaking at 1.0,
# 1.1 and 2.5 GB resident); the race runs gain little (80 -> 77 s).
TEST     := GOGC=400 $(GO) test -vet=off -timeout 20m

.PHONY: all build run test test-long fmt-check vet unit unit-norace long regress rust-check bench fuzz mutation clean

all: build

build:
	$(GO) build -o bin/tcpmap ./cmd/tcpmap

# The main job: plan the manual's GEMM (workloads/gemm.yaml) with the SAT
# branch and bound over its whole mapspace, tiles included, and prove the
# plan optimal under the cost model (about 0.5 s on the 2-core machine,
# the build aside).
run: build
	./bin/tcpmap plan workloads/gemm.yaml

# The test suite CI runs (a few minutes on 2 cores): formatting, vet, every
# test with the race detector on reduced spaces (-short), the tests the race
# detector would make too slow without it, the cost-model regression
# against results/cost-baseline.json, and the type check of the emitted
# Rust kernels (rust-check).
test: fmt-check vet unit unit-norace regress rust-check

# The long suite: every test without -short (the whole-size searches, every
# candidate of the spaces -short samples, every row of the tables it trims)
# and without the race detector, then the regression. Not run by CI.
test-long: fmt-check vet long regress

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# The race detector runs the packages whose code runs concurrently (the
# parallel planner, the sweeps' workers and their progress lines, the
# simulator's slice runs). It instruments every package such a test links,
# so the planner's workers run engines, mapping, constraints, cost and emit
# code under it there: the state goroutines share (engines' rule registry,
# mapping's factorization cache) is raced by the planner's tests. Those
# packages' own tests are single-threaded, where the detector can find
# nothing: they run without it (unit-norace), 3-10x faster (engines' 28 s
# of CPU under it, 6 s without). No race test binary links the result
# store's SQLite (modernc.org/sqlite, ~58 s of CPU to build with -race on
# 2 cores): search/sweep runs its
# workers against a store in memory, its SQLite tests are results' own,
# and the CLI (cmd/tcpmap) runs without it (its race run alone was ~36 s):
# its sweep's goroutines are sweep.Run's and sweep.Lines', tested there;
# the other, regress pricing the graph plans side by side (each into its
# own slot), ran under it in no test.
RACE_PKGS  := ./search ./search/sweep ./verify
# search and verify select their race run's tests themselves (TestMain,
# internal/racerun) and run whole without the detector too; search/sweep
# runs whole under it alone.
PLAIN_PKGS  = $(filter-out tcpmap/search tcpmap/search/sweep,$(shell $(GO) list $(PKGS)))

# The race run is one go test command, so that its packages' runs
# overlap on the 2 cores (run one after the other, they kept 1.6 cores
# busy on average: 115 s cold, 91 s as one command, session 33). Under
# the detector, search and verify run their concurrency tests alone:
# search's raceSearch (search/main_test.go: the parallel workers of
# Solve, the exhaustive planner and an op space at a budget, a listing
# limit, a timeout and a memory budget, the graph planner's concurrent op
# searches and its cache, the resident chains' workers, the plans run on
# the simulator by parallel subtests) and verify's raceVerify
# (verify/main_test.go: one test of each simulator path whose slices or
# loops run on several workers). Their other tests run the same workers
# but repeat no concurrent path those do not, and run in unit-norace
# (verify's under the detector: 22 s of CPU, 3 s without; session 34).
unit:
	$(TEST) -race -short -count=1 $(RACE_PKGS)

# The tests the race detector skips or samples (raceEnabled in
# verify/race_on_test.go, raceDetector in search), run whole without it:
# the manual's GEMM sizes simulated on every slice, every mutated
# configuration, the mutation study's sample (RACE_SKIPPED, without
# -short); the search package's tests (all of them, the race run's few
# included: the SAT planner against the exhaustive one, the property
# tests of whole plans, lower bounds and layouts, the planned plans on the
# simulator); and the other packages (PLAIN_PKGS, verify's other tests
# among them), with -short: among them the CLI's, whole (its explain,
# huge-axis equivalence and product-op planning, results/README.md's
# tables of every stored plan and layer), but for TestRegressRepoBaseline,
# which runs `tcpmap regress` as the regress target does (~23 s).
RACE_SKIPPED := '^(TestVerifyGoldenKernels|TestVerifyMutatedConfigs|TestMutation)$$'
NORACE_SKIP  := '^(TestRegressRepoBaseline|TestVerifyGoldenKernels|TestVerifyMutatedConfigs|TestMutation)$$'

# The runs overlap (search's on both cores, the others in turn); the
# target fails if any does.
unit-norace:
	@{ $(TEST) -count=1 -run $(RACE_SKIPPED) ./verify && \
	  $(TEST) -short -count=1 -skip $(NORACE_SKIP) $(PLAIN_PKGS); } & v=$$!; \
	$(TEST) -short -count=1 ./search; s=$$?; \
	wait $$v; r=$$?; test $$s -eq 0 -a $$r -eq 0

long:
	$(TEST) -count=1 -timeout 60m $(PKGS)

# The cost model's predictions against the baseline; after a deliberate change
# of the model, `./bin/tcpmap regress --update` rewrites the baseline.
regress: build
	./bin/tcpmap regress

# Type-check, with rustc, every golden kernel and stored plan as emitted in
# both Rust APIs, and the manual's Hello kernels (faults fixed), against the stubs of the
# vendor's libraries in rust/ (rust/README.md; about 15 s). Without rustc on
# PATH it says so and passes.
rust-check:
	@if command -v rustc >/dev/null 2>&1; then \
	  TCPMAP_RUST_CHECK=1 $(TEST) -count=1 -v -run '^TestRustCheck$$' ./emit; \
	else \
	  echo "*** rust-check SKIPPED: rustc is not on PATH, the emitted Rust kernels are NOT type-checked ***"; \
	fi

# The mutation study (issue 18 §4): every single-field corruption of every
# golden kernel and of five stored plans (fully configured: lowered), run
# through the validator and the simulator, classified killed / survived /
# equivalent; it fails below 97 % of the non-equivalent mutants killed and
# lists the survivors. The manual's GEMM-sized kernels and the larger plans
# take a seeded sample of their mutants. `go test ./verify` runs a fixed
# 1-in-300 sample of the light kernels' mutants (verify/mutation_test.go).
mutation:
	TCPMAP_MUTATION=1 $(GO) test -count=1 -timeout 40m -v -run '^TestMutation$$' ./verify

bench:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

# Run every fuzz target for FUZZTIME each. Minimizing a new input is capped
# at 100 runs: with a time cap (5 s) the spec fuzzer, whose seed is the
# 20 KB rngd.yaml, spent its time minimizing (40 runs in 30 s; 314,000
# with the run cap).
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test -run='^$$' -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=100x $$pkg; \
	  done; \
	done

clean:
	rm -rf bin
