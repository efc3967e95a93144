package engines

import (
	"fmt"
	"reflect"
)

// Listing a spec's fields.

// Entry is one cited number of a Spec, for listings.
type Entry struct {
	Path               string `json:"path"`  // dotted path, e.g. "dm.banks"
	Value              any    `json:"value"` // the number, list or name
	Cite               string `json:"cite"`
	DerivedFromExample bool   `json:"derived_from_example,omitempty"`
	Assumption         bool   `json:"assumption,omitempty"`
	Note               string `json:"note,omitempty"`
}

// Entries lists every cited value of the spec in file order.
func (s *Spec) Entries() []Entry {
	var out []Entry
	collectEntries(reflect.ValueOf(s).Elem(), "", &out)
	return out
}

func collectEntries(v reflect.Value, path string, out *[]Entry) {
	if v.CanAddr() {
		if c, ok := v.Addr().Interface().(cited); ok {
			cite, derived, assumption, note := c.citation()
			*out = append(*out, Entry{Path: path, Value: c.raw(), Cite: cite, DerivedFromExample: derived, Assumption: assumption, Note: note})
			return
		}
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			if f := t.Field(i); f.IsExported() {
				name, _ := yamlName(f)
				collectEntries(v.Field(i), joinPath(path, name), out)
			}
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			collectEntries(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}
