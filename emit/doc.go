// Package emit prints kernel programs and plans: Rust Virtual ISA kernels in
// the manual's API, plan JSON for other tools, timeline traces and reports.
// It computes no costs.
package emit
