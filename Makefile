# tcpmap — see README.md.
GO       ?= go
FUZZTIME ?= 30s
PKGS     := ./...

.PHONY: all build run test fmt-check vet unit regress bench fuzz clean

all: build

build:
	$(GO) build -o bin/tcpmap ./cmd/tcpmap

# The main job: plan the manual's GEMM (workloads/gemm.yaml) with the SAT
# branch and bound over its whole mapspace, tiles included, and prove the
# plan optimal under the cost model (about 1-2 s on the 2-core machine).
run: build
	./bin/tcpmap plan workloads/gemm.yaml

# The test suite CI runs: formatting, vet, every test with the race detector,
# and the cost-model regression against results/cost-baseline.json.
test: fmt-check vet unit regress

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -count=1 $(PKGS)

# The cost model's predictions against the baseline; after a deliberate change
# of the model, `./bin/tcpmap regress --update` rewrites the baseline.
regress: build
	./bin/tcpmap regress

bench:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

# Run every fuzz target for FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
	  dir=$$($(GO) list -f '{{.Dir}}' $$pkg); \
	  for f in $$(grep -ho '^func Fuzz[A-Za-z0-9_]*' $$dir/*_test.go 2>/dev/null | sed 's/^func //'); do \
	    echo "== $$pkg $$f"; \
	    $(GO) test -run='^$$' -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=5s $$pkg; \
	  done; \
	done

clean:
	rm -rf bin
