package httpserve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server/gateway"
	"github.com/r2r-mcp/r2r-mcp/tools"
)

// admission bounds the requests in one stage (reading a body, being served): at most max at
// once, and at most perCaller of them for one caller, so that one credential cannot take
// every slot and leave the others nothing but 429s.
type admission struct {
	max, perCaller int
	mu             sync.Mutex
	n              int
	by             map[string]int
}

// newAdmission admits max requests at once; one caller may hold three quarters of them
// (all of them when max is 1).
func newAdmission(n int) *admission {
	return &admission{max: n, perCaller: max(1, n-n/4), by: map[string]int{}}
}

// take admits one request of caller; release gives its slot back. When it is refused,
// mine says whether the caller's own share was full (rather than the whole server).
func (a *admission) take(caller string) (release func(), mine, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.by[caller] >= a.perCaller {
		return nil, true, false
	}
	if a.n >= a.max {
		return nil, false, false
	}
	a.n++
	a.by[caller]++
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.n--
			if a.by[caller]--; a.by[caller] <= 0 {
				delete(a.by, caller)
			}
		})
	}, false, true
}

// admit takes a slot of a for caller, or answers 429 and returns ok=false.
func admit(w http.ResponseWriter, a *admission, caller string) (release func(), ok bool) {
	release, mine, ok := a.take(caller)
	switch {
	case ok:
		return release, true
	case mine:
		tooMany(w, "busy", fmt.Sprintf("You have %d requests in progress already, the most one user may have at once; "+
			"try again when one has finished.", a.perCaller), time.Second)
	default:
		tooMany(w, "busy", fmt.Sprintf("r2r-mcp is answering %d requests already; try again in a second.", a.max), time.Second)
	}
	return nil, false
}

// readBody reads r's body (at most MaxBodyBytes) within timeout, holding a reading slot of
// caller, and replaces it with the bytes read: a request takes a slot to be served only
// once its whole body has arrived, so a client trickling a body holds no slot for longer
// than timeout. On failure it answers (408, 413 or 400) and returns false.
func readBody(w http.ResponseWriter, r *http.Request, readers *admission, caller string, timeout time.Duration) bool {
	if r.Body == nil || r.Body == http.NoBody {
		return true
	}
	release, ok := admit(w, readers, caller)
	if !ok {
		return false
	}
	defer release()
	rc := http.NewResponseController(w)
	// Not every ResponseWriter reaches a connection (httptest's recorder does not); there
	// is then no socket to wait on.
	if err := rc.SetReadDeadline(time.Now().Add(timeout)); err == nil {
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	_ = r.Body.Close()
	var tooBig *http.MaxBytesError
	switch {
	case err == nil:
		r.Body = io.NopCloser(bytes.NewReader(body))
		return true
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "invalid_request",
			fmt.Sprintf("The request body is over %d MiB; send a smaller request.", MaxBodyBytes>>20))
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "invalid_request",
			fmt.Sprintf("The request body did not arrive within %s; send it whole and at once.", timeout))
	default:
		writeError(w, http.StatusBadRequest, "invalid_request", "The request body could not be read: "+tools.Sanitize(err.Error()))
	}
	return false
}

// tooMany answers 429 with Retry-After.
func tooMany(w http.ResponseWriter, typ, msg string, wait time.Duration) {
	secs := max(1, int((wait+time.Second-1)/time.Second))
	after := float64(secs)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	gateway.WriteError(w, http.StatusTooManyRequests, gateway.Error{Type: typ, Code: gateway.CodeOf(http.StatusTooManyRequests),
		Message: msg, Retryable: true, RetryAfter: &after})
}

// clientAddr is the network a request comes from: its IP address, or the /64 an IPv6
// address belongs to (one host usually holds a whole /64).
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}
