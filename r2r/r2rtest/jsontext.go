package r2rtest

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// jsonDocumentText is R2R's JSON parser: the document as indented "key: value" lines, keys in
// file order, null members of the top object and its nested objects left out, scalars as
// Python prints them (True, None, 1.0). Conformance test TestLive/ingestion_outcomes/json_text compares it with R2R.
func jsonDocumentText(src string) (string, error) {
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	v, err := readOrdered(dec)
	if err == nil {
		if _, extra := dec.Token(); extra == nil {
			err = fmt.Errorf("extra data")
		}
	}
	if err != nil {
		// R2R raises an R2RException (400) with Python's decoder message; the cause here is
		// Go's.
		return "", &invalidJSONError{"Failed to parse JSON data, likely due to invalid JSON: " + err.Error()}
	}
	return formatJSON(v, 0, true), nil
}

// invalidJSONError fails ingestion and answers 400 R2RException instead of R2R's usual 500
// R2RDocumentProcessingError.
type invalidJSONError struct{ msg string }

func (e *invalidJSONError) Error() string { return e.msg }

// member is one member of a JSON object, in file order.
type member struct {
	key string
	val any
}

func readOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			var obj []member
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readOrdered(dec)
				if err != nil {
					return nil, err
				}
				key := k.(string)
				replaced := false
				for i := range obj { // a repeated key keeps its first place and the last value
					if obj[i].key == key {
						obj[i].val, replaced = v, true
					}
				}
				if !replaced {
					obj = append(obj, member{key, v})
				}
			}
			_, err := dec.Token()
			return obj, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := readOrdered(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
	}
	return tok, nil
}

// formatJSON is R2R's format_json_as_text; strip is whether null members are left out,
// which R2R does for the top object and the objects nested in its members, not for the
// objects in lists.
func formatJSON(v any, indent int, strip bool) string {
	pad := strings.Repeat(" ", indent)
	switch x := v.(type) {
	case []member:
		lines := []string{}
		for _, m := range x {
			switch m.val.(type) {
			case nil:
				if strip {
					continue
				}
				lines = append(lines, pad+m.key+": None")
			case []member:
				lines = append(lines, pad+m.key+":\n"+formatJSON(m.val, indent+2, strip))
			case []any:
				lines = append(lines, pad+m.key+":\n"+formatJSON(m.val, indent+2, false))
			default:
				lines = append(lines, pad+m.key+": "+pyScalar(m.val))
			}
		}
		return strings.Join(lines, "\n")
	case []any:
		lines := []string{}
		for _, it := range x {
			lines = append(lines, formatJSON(it, indent+2, false))
		}
		return strings.Join(lines, "\n")
	}
	return pad + pyScalar(v)
}

// pyScalar is Python's str() of a decoded JSON scalar.
func pyScalar(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	case json.Number:
		s := x.String()
		if !strings.ContainsAny(s, ".eE") {
			return s // an int
		}
		f, err := x.Float64()
		if err != nil {
			return s
		}
		return pyFloat(f)
	}
	return fmt.Sprint(v)
}

// pyFloat is Python's repr of a float: the shortest digits that round-trip, in positional
// form with at least one decimal for exponents -4..15, else as 1e+16.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	exp := int(math.Floor(math.Log10(math.Abs(f))))
	if exp < -4 || exp >= 16 {
		s := strconv.FormatFloat(f, 'e', -1, 64) // 1e+16, 1.5e-05
		mant, e, _ := strings.Cut(s, "e")
		sign, digits := e[:1], strings.TrimLeft(e[1:], "0")
		if len(digits) < 2 {
			digits = fmt.Sprintf("%02s", digits)
		}
		return mant + "e" + sign + digits
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}
