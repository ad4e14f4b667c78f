package memory

import "testing"

func TestSignature(t *testing.T) {
	base := "panic: open /tmp/build-4412/cfg.yaml: too many open files (pid 4242) at main.go:88"
	for _, tc := range []struct {
		name, a, b string
		same       bool
	}{
		{"other pid, line and temp dir", base, "panic: open /tmp/build-9/cfg.yaml: too many open files (pid 77) at main.go:12", true},
		{"stack trace added", base, "goroutine 1 [running]:\n" + base + "\n\tmain.main()\n\t\t/src/main.go:88 +0x1d\nexit status 2", true},
		{"python traceback", "Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\nKeyError: 'user_9f2c1e0a'",
			"KeyError: 'user_77ab12cd'", true},
		{"uuid and timestamp", "2026-01-02T03:04:05Z document 0b3e0f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5b not found",
			"2026-11-28T20:00:00Z document 9d3e0f4e-1c2d-4e5f-8a9b-0c1d2e3f4a5c not found", true},
		{"go test output", "dial tcp 127.0.0.1:5432: connect: connection refused",
			"--- FAIL: TestCheckout (0.02s)\n    store_test.go:41: dial tcp 127.0.0.1:5433: connect: connection refused\nFAIL\nexit status 1", true},
		{"python source line skipped", "ValueError: bad port 99",
			"Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\n    raise ValueError(f\"bad port {p}\")\nValueError: bad port 7", true},
		{"java", "java.lang.IllegalStateException: pool closed (id=42)",
			"java.lang.IllegalStateException: pool closed (id=7)\n\tat com.x.Pool.get(Pool.java:88)\n\tat com.x.Main.main(Main.java:12)", true},
		{"address", "segfault at 0x7ffd1234 in libfoo", "segfault at 0xdeadbeef in libfoo", true},
		{"other error", base, "panic: open /tmp/build-9/cfg.yaml: permission denied", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := Signature(tc.a), Signature(tc.b)
			if got := SameError(a, b); got != tc.same {
				t.Fatalf("SameError(%q, %q) = %v, want %v", a, b, got, tc.same)
			}
		})
	}
}

func TestPatterns(t *testing.T) {
	fixes := []Memory{
		{ID: "3", Title: "newest", Error: "dial tcp 10.0.0.3:5432: connection refused"},
		{ID: "2", Title: "other", Error: "permission denied"},
		{ID: "1", Title: "oldest", Error: "dial tcp 10.0.0.9:5433: connection refused"},
	}
	ps := Patterns(fixes)
	if len(ps) != 2 || ps[0].Count != 2 || ps[0].Newest.ID != "3" || ps[1].Count != 1 {
		t.Fatalf("patterns = %+v", ps)
	}
}
