package emit

import "tcpmap/emit/rustapi"

// API is the Rust library a kernel is emitted against; the two APIs and
// what each can spell are package rustapi's.
type API = rustapi.API

// The two APIs (rustapi.Visa01, rustapi.Opt06).
const (
	Visa01 = rustapi.Visa01 // furiosa-visa-std 0.1.0, the default
	Opt06  = rustapi.Opt06  // furiosa-opt-std 0.6.0
)

// ParseAPI reads an API name (visa-0.1 or opt-0.6), as rustapi.Parse does.
func ParseAPI(s string) (API, error) { return rustapi.Parse(s) }
