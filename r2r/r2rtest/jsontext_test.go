package r2rtest

import "testing"

func TestJSONDocumentText(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"order and nulls", `{"b": 1, "a": null, "c": {"x": null, "y": "z"}}`, "b: 1\nc:\n  y: z"},
		{"lists keep nulls", `{"l": [{"n": null}, null, true]}`, "l:\n    n: None\n    None\n    True"},
		{"repeated key keeps its place", `{"a": 1, "b": 2, "a": 3}`, "a: 3\nb: 2"},
		{"top-level list", `[1, "two"]`, "  1\n  two"},
		{"scalar", `"just text"`, "just text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonDocumentText(tc.src)
			if err != nil || got != tc.want {
				t.Errorf("jsonDocumentText(%s) = %q, %v; want %q", tc.src, got, err, tc.want)
			}
		})
	}
	if _, err := jsonDocumentText(`{"a": 1,`); err == nil {
		t.Error("invalid JSON accepted")
	}
}

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{2: "2.0", 1.5: "1.5", 1e20: "1e+20", 1e-5: "1e-05", 0.0001: "0.0001",
		123456789012345678: "1.2345678901234568e+17", 1e15: "1000000000000000.0", -0.5: "-0.5", 0: "0.0"} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %q, want %q", f, got, want)
		}
	}
}
