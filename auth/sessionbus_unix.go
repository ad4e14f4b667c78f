//go:build linux || freebsd || openbsd || netbsd || dragonfly

package auth

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/godbus/dbus/v5"
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

// noKeyring reports the D-Bus errors that mean this machine has no Secret Service: no
// session bus, a bus address nothing listens on, or a bus on which no Secret Service is
// running or activatable. A Secret Service that exists but refuses (locked collection,
// dismissed prompt, no login collection) is not one of them.
func noKeyring(err error) bool {
	if errors.Is(err, errNoSessionBus) {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	name := ""
	var de dbus.Error
	var dp *dbus.Error
	switch {
	case errors.As(err, &de):
		name = de.Name
	case errors.As(err, &dp) && dp != nil:
		name = dp.Name
	}
	switch name {
	case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
		return true
	}
	return false
}
