//go:build !(linux || freebsd || openbsd || netbsd || dragonfly)

package auth

// checkSessionBus is a no-op where the keyring is not reached through D-Bus.
func checkSessionBus() error { return nil }

// noKeyring is false here: macOS and Windows always have a keyring, and go-keyring reports
// the platforms it does not support with keyring.ErrUnsupportedPlatform (see classify).
func noKeyring(error) bool { return false }
