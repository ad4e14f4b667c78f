//go:build linux || freebsd || openbsd || netbsd || dragonfly

package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
)

// errNoSessionBus says why the Secret Service cannot be reached at all.
var errNoSessionBus = errors.New("no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set), so no Secret Service")

// checkSessionBus fails fast when there is no D-Bus session bus. Without this, godbus
// falls back to running dbus-launch, which starts a session bus (and through it a keyring
// daemon) that outlives r2r-mcp, on every headless machine that has dbus-x11 installed.
// It mirrors godbus's own discovery: the variable, then /run/user/<uid>/{bus,dbus-session}.
func checkSessionBus() error {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" && a != "autolaunch:" {
		return nil
	}
	run := filepath.Join("/run/user", strconv.Itoa(os.Getuid()))
	for _, name := range []string{"bus", "dbus-session"} {
		if _, err := os.Stat(filepath.Join(run, name)); err == nil {
			return nil
		}
	}
	return errNoSessionBus
}
