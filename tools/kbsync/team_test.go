package kbsync

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/r2r-mcp/r2r-mcp/r2r"
)

// TestForKeepsEveryKnob: the Writer For returns has every exported field of w but Scope
// (which is sc), so a team sync's team layer is written as its private layer is, and a knob
// added to Writer later reaches it too (or this test asks how to set it).
func TestForKeepsEveryKnob(t *testing.T) {
	w := &Writer{}
	wv := reflect.ValueOf(w).Elem()
	implementers := []any{struct{ API }{}, &callLog{}}
	for i := range wv.NumField() {
		sf, f := wv.Type().Field(i), wv.Field(i)
		if !sf.IsExported() {
			continue // state of one Writer (its waits and R2R's start), not configuration
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int64:
			f.SetInt(7)
		case reflect.Func:
			f.Set(reflect.MakeFunc(f.Type(), func([]reflect.Value) []reflect.Value { return nil }))
		case reflect.Struct:
			f.Set(reflect.ValueOf(Scope{CollectionID: "private", Layer: LayerPrivate}))
		case reflect.Interface:
			for _, v := range implementers {
				if reflect.TypeOf(v).Implements(f.Type()) {
					f.Set(reflect.ValueOf(v))
					break
				}
			}
			if f.IsNil() {
				t.Fatalf("Writer.%s: add a value implementing %s to this test", sf.Name, f.Type())
			}
		default:
			t.Fatalf("Writer.%s is a %s: teach this test to set one", sf.Name, f.Kind())
		}
	}
	sc := Scope{CollectionID: "team", UserID: "u", Layer: LayerTeam}
	got := reflect.ValueOf(w.For(sc)).Elem()
	for i := range wv.NumField() {
		sf := wv.Type().Field(i)
		if !sf.IsExported() {
			continue
		}
		want, have := wv.Field(i), got.Field(i)
		if sf.Name == "Scope" {
			want = reflect.ValueOf(sc)
		}
		same := reflect.DeepEqual(want.Interface(), have.Interface())
		if want.Kind() == reflect.Func {
			same = want.Pointer() == have.Pointer()
		}
		if !same {
			t.Errorf("For left Writer.%s out (%v, want %v)", sf.Name, have, want)
		}
	}
}

// startCounter is an API that says when R2R started and counts the questions.
type startCounter struct {
	API
	asked atomic.Int32
}

func (s *startCounter) SystemStatus(context.Context) (*r2r.SystemStatus, error) {
	s.asked.Add(1)
	return &r2r.SystemStatus{}, nil
}

// TestForSharesTheRun: a sync's layers write to one R2R in one run, so R2R is asked when
// it started once for both, and a crash waited out by one layer is not waited out again
// by the other.
func TestForSharesTheRun(t *testing.T) {
	api := &startCounter{}
	private := &Writer{API: api, Scope: Scope{CollectionID: "private", Layer: LayerPrivate}}
	team := private.For(Scope{CollectionID: "team", Layer: LayerTeam})
	team.r2rStart(t.Context())
	private.r2rStart(t.Context())
	team.For(Scope{CollectionID: "other"}).r2rStart(t.Context())
	if n := api.asked.Load(); n != 1 {
		t.Errorf("R2R was asked when it started %d times for one run, want once", n)
	}
	team.run().outwaited.Store(true)
	if !private.run().outwaited.Load() {
		t.Error("a crash the team layer waited out is waited out again by the private layer")
	}
}
