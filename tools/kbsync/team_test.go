package kbsync

import (
	"reflect"
	"testing"
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
