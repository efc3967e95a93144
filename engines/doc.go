// Package engines is where tcpmap knows the hardware: the RNGD spec
// (rngd.yaml, embedded) and, one file per engine, its configuration type, the
// derivation of that configuration from mappings, its register-level rules
// (each a named, cited check) and its functional semantics on packets. It
// estimates no time.
package engines
