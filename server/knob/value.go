package knob

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

var durationType = reflect.TypeFor[time.Duration]()

// value is a field as a flag value (pflag.Value): it parses, checks its bounds and
// formats itself, so a bad flag and a bad environment value fail the same way.
type value struct {
	f      reflect.Value
	unit   string // "bytes" or ""
	enum   []string
	lo, hi reflect.Value // invalid = unbounded
	set    bool          // a list has been set once: later values append
}

// Type names the value's kind in the flag help.
func (v *value) Type() string {
	switch {
	case v.unit == "bytes":
		return "bytes"
	case v.f.Type() == durationType:
		return "duration"
	}
	switch v.f.Kind() {
	case reflect.Int, reflect.Int64, reflect.Uint32:
		return "int"
	case reflect.Float64:
		return "float"
	case reflect.Slice:
		return "strings"
	case reflect.Bool:
		return "bool"
	}
	return "string"
}

func (v *value) String() string {
	if !v.f.IsValid() {
		return ""
	}
	switch {
	case v.unit == "bytes":
		return FormatBytes(v.f.Int())
	case v.f.Type() == durationType:
		return time.Duration(v.f.Int()).String()
	}
	switch v.f.Kind() {
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.f.Int(), 10)
	case reflect.Uint32:
		return strconv.FormatUint(v.f.Uint(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.f.Float(), 'f', -1, 64)
	case reflect.Slice:
		return strings.Join(v.f.Interface().([]string), ",")
	case reflect.Bool:
		return strconv.FormatBool(v.f.Bool())
	}
	return v.f.String()
}

func (v *value) isZero() bool {
	if v.f.Kind() == reflect.Slice {
		return v.f.Len() == 0
	}
	return v.f.IsZero()
}

// Set parses s, checks it against the bounds and stores it; on an error the field keeps
// its value. A list takes comma-separated values, and a second Set adds to the first.
func (v *value) Set(s string) error {
	s = strings.TrimSpace(s)
	if v.f.Kind() == reflect.Slice {
		var items []string
		if v.set {
			items = v.f.Interface().([]string)
		}
		for item := range strings.SplitSeq(s, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
		v.f.Set(reflect.ValueOf(items))
		v.set = true
		return nil
	}
	old := reflect.New(v.f.Type()).Elem()
	old.Set(v.f)
	if err := v.parse(s); err != nil {
		return err
	}
	if err := v.check(); err != nil {
		v.f.Set(old)
		return err
	}
	return nil
}

// parse stores s without checking bounds (defaults and bounds themselves).
func (v *value) parse(s string) error {
	switch {
	case v.unit == "bytes":
		n, err := humanize.ParseBytes(s)
		if err != nil {
			return errors.New("want a size such as 64MiB, 512KB or 0")
		}
		if n > math.MaxInt64 {
			return fmt.Errorf("%s is too large", s)
		}
		v.f.SetInt(int64(n))
		return nil
	case v.f.Type() == durationType:
		d, err := time.ParseDuration(s)
		if err != nil && s != "0" {
			return fmt.Errorf("want a duration such as 1.5s, 300ms or 2m (%v)", err)
		}
		v.f.SetInt(int64(d))
		return nil
	}
	switch v.f.Kind() {
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return errors.New("want a whole number")
		}
		v.f.SetInt(n)
	case reflect.Uint32:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return errors.New("want a whole number")
		}
		v.f.SetUint(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return errors.New("want a number")
		}
		v.f.SetFloat(f)
	case reflect.String:
		v.f.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("want true or false")
		}
		v.f.SetBool(b)
	case reflect.Slice:
		return v.Set(s)
	default:
		return fmt.Errorf("knob: fields of type %s are not supported", v.f.Type())
	}
	return nil
}

// check reports a value outside the bounds or the enumeration.
func (v *value) check() error {
	if len(v.enum) > 0 && !slices.Contains(v.enum, v.f.String()) {
		return fmt.Errorf("want %s", strings.Join(v.enum, " or "))
	}
	below := v.lo.IsValid() && less(v.f, v.lo)
	above := v.hi.IsValid() && less(v.hi, v.f)
	if !below && !above {
		return nil
	}
	show := func(b reflect.Value) string { return (&value{f: b, unit: v.unit}).String() }
	switch {
	case v.lo.IsValid() && v.hi.IsValid():
		return fmt.Errorf("must be between %s and %s", show(v.lo), show(v.hi))
	case below:
		return fmt.Errorf("must be at least %s", show(v.lo))
	}
	return fmt.Errorf("must be at most %s", show(v.hi))
}

func less(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Int, reflect.Int64:
		return a.Int() < b.Int()
	case reflect.Uint32:
		return a.Uint() < b.Uint()
	case reflect.Float64:
		return a.Float() < b.Float()
	}
	return false
}

// urlHost is the host of a URL that may hold a password: "configured" when it has none.
func urlHost(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return u.Host
	}
	return "configured"
}

// FormatBytes formats a byte count with binary units as a size knob accepts it:
// "64MiB", "1.5GiB", "512B".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', -1, 64) + units[i]
	}
	return strings.TrimRight(strings.TrimRight(strconv.FormatFloat(f, 'f', 2, 64), "0"), ".") + units[i]
}
