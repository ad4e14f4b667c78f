//go:build !race

package servertest

// RaceEnabled reports whether this test binary (and so the binary Build makes) has the race
// detector on.
const RaceEnabled = false
