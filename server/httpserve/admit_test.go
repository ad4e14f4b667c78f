package httpserve_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/r2r/r2rtest"
	"github.com/r2r-mcp/r2r-mcp/server"
	"github.com/r2r-mcp/r2r-mcp/server/httpserve"
)

// trickle opens a connection that sends a request's headers and the first byte of its
// body, and returns the status line of the server's first answer: "100 Continue" once the
// server reads the body, or the final status when it refuses the request first. The
// connection stays open, the rest of the body never comes.
func trickle(t *testing.T, base, key string) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	u, _ := url.Parse(base)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // fail, not hang, when the server never answers
	fmt.Fprintf(c, "POST /mcp/invoke HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: 1000\r\nExpect: 100-continue\r\n\r\n", u.Host, key)
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(line, " 100 ") {
		if _, err := br.ReadString('\n'); err != nil { // the blank line after 100 Continue
			t.Fatal(err)
		}
		fmt.Fprint(c, "{")
	}
	return c, br, strings.TrimSpace(line)
}

// One key holder trickling bodies on many connections neither locks the other users out
// nor holds a slot beyond the body timeout: bodies are read before a request takes a slot,
// under a deadline, and one user gets at most three quarters of the slots of each stage.
func TestTricklingBodiesLockNobodyOut(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, func(c *server.Config, o *httpserve.Options) {
		c.Options.MaxInflight = 4
		o.BodyTimeout = 300 * time.Millisecond
	})
	if status, out, _ := invoke(t, rep.URL, tm.Alice.Key, "r2r_status", nil); status != http.StatusOK { // alice's key is known
		t.Fatalf("warm-up: %d %+v", status, out)
	}
	type held struct {
		br     *bufio.Reader
		status string
	}
	var reading []held
	refused := 0
	for range 10 {
		_, br, status := trickle(t, rep.URL, tm.Alice.Key)
		switch {
		case strings.Contains(status, " 100 "):
			reading = append(reading, held{br, status})
		case strings.Contains(status, " 429 "):
			refused++
		default:
			t.Fatalf("a trickled request was answered %q", status)
		}
	}
	if len(reading) != 3 || refused != 7 {
		t.Errorf("10 trickled requests of one user with 4 slots: %d read, %d refused; want 3 and 7", len(reading), refused)
	}
	// While alice's bodies trickle, bob is served.
	if status, out, _ := invoke(t, rep.URL, tm.Bob.Key, "r2r_list_collections", nil); status != http.StatusOK {
		t.Errorf("bob while alice trickles: %d %+v", status, out)
	}
	// The trickled requests end at the body timeout with 408.
	for _, h := range reading {
		resp, err := http.ReadResponse(h.br, nil)
		if err != nil {
			t.Fatalf("a trickled request got no answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("a trickled request: %d, want 408", resp.StatusCode)
		}
	}
	if status, out, _ := invoke(t, rep.URL, tm.Alice.Key, "r2r_status", nil); status != http.StatusOK {
		t.Errorf("alice after her trickled requests ended: %d %+v", status, out)
	}
}

// One user's slow calls take at most three quarters of the slots: with 4, alice's fourth
// call at once gets 429 for her, and bob's call is served beside her three.
func TestOneUserCannotTakeEverySlot(t *testing.T) {
	tm := newTeam(t)
	rep := newReplica(t, tm, func(c *server.Config, _ *httpserve.Options) { c.Options.MaxInflight = 4 })
	for _, key := range []string{tm.Alice.Key, tm.Bob.Key} { // both keys known before R2R slows down
		if status, _, _ := invoke(t, rep.URL, key, "r2r_status", nil); status != http.StatusOK {
			t.Fatalf("warm-up: %d", status)
		}
	}
	tm.Emu.Configure(func(o *r2rtest.Options) { o.Latency = 400 * time.Millisecond })
	answers := make(chan int, 5)
	for range 5 {
		go func() {
			status, _, _ := invoke(t, rep.URL, tm.Alice.Key, "r2r_list_collections", nil)
			answers <- status
		}()
	}
	// Once alice holds three slots (two of her five got 429, at once), bob asks.
	alice := []int{<-answers, <-answers}
	status, out, _ := invoke(t, rep.URL, tm.Bob.Key, "r2r_list_collections", nil)
	for range 3 {
		alice = append(alice, <-answers)
	}
	slices.Sort(alice)
	if want := []int{200, 200, 200, 429, 429}; !slices.Equal(alice, want) {
		t.Errorf("alice's five calls at once: %v, want %v", alice, want)
	}
	if status != http.StatusOK {
		t.Errorf("bob beside alice's three calls: %d %+v", status, out)
	}
}
