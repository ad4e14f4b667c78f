package httpserve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r"
	"github.com/r2r-mcp/r2r-mcp/server"
)

// accessJWT is an (unsigned) access token of user sub, distinct per n.
func accessJWT(sub string, n int) string {
	claims, _ := json.Marshal(map[string]any{"sub": sub, "token_type": "access", "jti": n,
		"exp": time.Now().Add(time.Hour).Unix()})
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString(claims) + ".c2ln"
}

// liveHeap is the live heap after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// maxKeysFigures reads what --max-keys's help says a credential and a user cost.
func maxKeysFigures(t *testing.T) (credBytes, userBytes int64) {
	t.Helper()
	f, _ := reflect.TypeFor[server.HTTPOptions]().FieldByName("MaxKeys")
	help := f.Tag.Get("help")
	m := regexp.MustCompile(`about (\d+) bytes each.*about (\d+) KiB`).FindStringSubmatch(help)
	if m == nil {
		t.Fatalf("--max-keys help states no cost per credential and per user: %q", help)
	}
	c, _ := strconv.ParseInt(m[1], 10, 64)
	u, _ := strconv.ParseInt(m[2], 10, 64)
	return c, u << 10
}

// The memory --max-keys's help states is what the handler holds: many access tokens of one
// user cost their remembered checks only (the user's tools, limiters and history are built
// once per R2R user), and each further user one copy of the tools. R2R is not involved: the
// check answers from the token's subject.
func TestMaxKeysHelpStatesTheMemory(t *testing.T) {
	credBytes, userBytes := maxKeysFigures(t)
	const n = 200
	for _, tc := range []struct {
		name  string
		sub   func(i int) string
		bound int64
	}{
		{"access tokens of one user", func(int) string { return "alice" }, credBytes},
		{"one access token of each of many users", func(i int) string { return fmt.Sprintf("user%d", i) }, userBytes + credBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := server.DefaultOptions()
			base, err := server.New(server.Config{R2RURL: "http://127.0.0.1:9", Remote: true, ConfigDir: t.TempDir(),
				WorkDir: t.TempDir(), Options: opts}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(base.Close)
			h, err := New(base, Options{HTTPOptions: opts.HTTP})
			if err != nil {
				t.Fatal(err)
			}
			subs := map[string]string{}
			h.users.check = func(_ context.Context, key string) (*r2r.User, error) {
				return &r2r.User{ID: subs[key]}, nil
			}
			creds := make([]string, n)
			for i := range creds {
				creds[i] = accessJWT(tc.sub(i), i)
				subs[creds[i]] = tc.sub(i)
			}
			// The warm-up builds what is built once, and in the first case the user.
			warm := accessJWT(tc.sub(n), -1)
			subs[warm] = tc.sub(n)
			if _, err := h.users.get(t.Context(), warm, "127.0.0.1"); err != nil {
				t.Fatal(err)
			}
			before := liveHeap()
			for _, c := range creds {
				if _, err := h.users.get(t.Context(), c, "127.0.0.1"); err != nil {
					t.Fatal(err)
				}
			}
			each := (liveHeap() - before) / n
			runtime.KeepAlive(h)
			t.Logf("%d bytes each", each)
			if each > tc.bound+tc.bound/4 || each < tc.bound/3 {
				t.Errorf("%d credentials cost %d bytes each; --max-keys's help says about %d", n, each, tc.bound)
			}
		})
	}
}
