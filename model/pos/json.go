package pos

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// JSONLine returns the 1-based line of the value at path in the JSON
// document data (`ops[3].stages[1]`, `cost.cycles`: keys joined by dots,
// list indices in brackets), or of its longest prefix found; 0 when none
// is (or data breaks off before it).
func JSONLine(data []byte, path string) int {
	for path != "" {
		if l := jsonWalk(data, func(p string, _ bool) bool { return p == path }); l > 0 {
			return l
		}
		i := strings.LastIndexAny(path, ".[")
		if i <= 0 {
			break
		}
		path = path[:i]
	}
	return 0
}

// JSONKeyLine returns the 1-based line of the first object key named key,
// at any depth of the JSON document data; 0 when there is none.
func JSONKeyLine(data []byte, key string) int {
	return jsonWalk(data, func(p string, isKey bool) bool { return isKey && (p == key || strings.HasSuffix(p, "."+key)) })
}

// jsonWalk reads data's JSON tokens, calling match with the path of every
// value (`tensors[3].chip`) and of every key, and returns the line of the
// first match (where its token ends), 0 when none matches.
func jsonWalk(data []byte, match func(path string, isKey bool) bool) int {
	type frame struct {
		arr     bool
		key     string
		idx     int
		wantKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []frame
	path := func(extra string) string {
		var b strings.Builder
		for _, f := range stack {
			if f.arr {
				b.WriteString("[" + strconv.Itoa(f.idx) + "]")
			} else {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			}
		}
		if extra != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(extra)
		}
		return b.String()
	}
	done := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].arr {
				stack[n-1].idx++
			} else {
				stack[n-1].wantKey = true
			}
		}
	}
	line, read := 1, 0 // the line at byte read, counted as the tokens go
	for {
		tok, err := dec.Token()
		if err != nil {
			return 0
		}
		off := min(int(dec.InputOffset()), len(data))
		line += bytes.Count(data[read:off], []byte("\n"))
		read = off
		n := len(stack)
		if n > 0 && !stack[n-1].arr && stack[n-1].wantKey {
			if k, ok := tok.(string); ok {
				stack = stack[:n-1]
				p := path(k)
				stack = append(stack, frame{key: k})
				if match(p, true) {
					return line
				}
				continue
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:n-1]
			done()
			continue
		}
		if n > 0 && match(path(""), false) {
			return line
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, frame{arr: d == '[', wantKey: d == '{'})
			continue
		}
		done()
	}
}
