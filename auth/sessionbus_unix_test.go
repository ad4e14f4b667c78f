//go:build linux || freebsd || openbsd || netbsd || dragonfly

package auth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"testing"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"
)

// TestSystemKeyringTellsNoKeyringFromAFailingOne runs the errors D-Bus and go-keyring
// really produce through SystemKeyring (go-keyring's mock returns them as the backend
// would) and checks which ones mean "no keyring at all".
func TestSystemKeyringTellsNoKeyringFromAFailingOne(t *testing.T) {
	_, dialErr := net.Dial("unix", filepath.Join(t.TempDir(), "no-bus"))
	var op *net.OpError
	if !errors.As(dialErr, &op) {
		t.Fatalf("dialling a missing socket gave %T %v", dialErr, dialErr)
	}
	tests := []struct {
		name      string
		err       error
		noKeyring bool
	}{
		{"no session bus", errNoSessionBus, true},
		{"bus address nothing listens on", dialErr, true},
		{"no Secret Service on the bus", dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown",
			Body: []any{"The name org.freedesktop.secrets was not provided by any .service files"}}, true},
		{"no Secret Service (pointer)", dbus.NewError("org.freedesktop.DBus.Error.NameHasNoOwner", nil), true},
		{"wrapped", fmt.Errorf("open session: %w", dbus.Error{Name: "org.freedesktop.DBus.Error.ServiceUnknown"}), true},
		{"unsupported platform", keyring.ErrUnsupportedPlatform, true},
		{"locked collection", errors.New("failed to unlock correct collection '/org/freedesktop/secrets/aliases/default'"), false},
		{"Secret Service error", dbus.Error{Name: "org.freedesktop.Secret.Error.IsLocked"}, false},
		{"D-Bus timeout", dbus.Error{Name: "org.freedesktop.DBus.Error.NoReply"}, false},
	}
	t.Cleanup(MockKeyring)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			MockKeyringWithError(tt.err)
			raw, err := SystemKeyring().Get(KeyringService, testURL)
			if raw != "" || err == nil || errors.Is(err, ErrNoKeyring) != tt.noKeyring {
				t.Fatalf("Get: %q %v; want ErrNoKeyring=%v", raw, err, tt.noKeyring)
			}
			// The backend's error stays intact (dbus.Error is not comparable, hence the text).
			if err.Error() != tt.err.Error() {
				t.Errorf("classification changed the text: %q", err)
			}
			s := &KeyringStore{}
			if _, err := s.Load(ctx, testURL); !errors.Is(err, ErrKeyringUnavailable) || errors.Is(err, ErrNoKeyring) != tt.noKeyring {
				t.Errorf("Load: %v", err)
			}
			if err := s.Save(ctx, testURL, testSecret(KindAPIKey, "key_a.b")); errors.Is(err, ErrNoKeyring) != tt.noKeyring {
				t.Errorf("Save: %v", err)
			}
		})
	}
	MockKeyring()
	if _, err := SystemKeyring().Get(KeyringService, "http://nothing"); !errors.Is(err, keyring.ErrNotFound) || errors.Is(err, ErrNoKeyring) {
		t.Errorf("not found: %v", err)
	}
}
