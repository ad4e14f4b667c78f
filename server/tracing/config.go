package tracing

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultServiceName is service.name when OTEL_SERVICE_NAME is not set.
const DefaultServiceName = "r2r-mcp"

// ProtocolJSON is the OTLP protocol this package exports with.
const ProtocolJSON = "http/json"

// DefaultTimeout bounds an export request when OTEL_EXPORTER_OTLP_TIMEOUT is not set (the
// OTLP exporter default).
const DefaultTimeout = 10 * time.Second

// Config is where traces go.
type Config struct {
	// Endpoint is the full URL spans are POSTed to.
	Endpoint string
	// Headers are added to every export request (credentials of the collector, usually).
	Headers http.Header
	// ServiceName and ServiceVersion become the resource's service.name and service.version.
	ServiceName    string
	ServiceVersion string
	// Protocol is the OTLP protocol the environment asked for ("" = not set).
	Protocol string
	// Timeout bounds one export request (0 = DefaultTimeout).
	Timeout time.Duration
}

// FromEnv reads the OpenTelemetry exporter variables through getenv: ok is false when
// neither OTEL_EXPORTER_OTLP_TRACES_ENDPOINT nor OTEL_EXPORTER_OTLP_ENDPOINT is set, and then
// nothing else is read. The traces endpoint is used as it is; the general one gets
// /v1/traces appended to its path. OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT is in milliseconds.
// OTEL_EXPORTER_OTLP_(TRACES_)HEADERS is a list of
// key=value pairs separated by commas, values percent-encoded; an error about it never
// quotes a value, since headers carry credentials.
func FromEnv(getenv func(string) string) (cfg Config, ok bool, err error) {
	if ep := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); ep != "" {
		cfg.Endpoint = ep
	} else if ep := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); ep != "" {
		cfg.Endpoint = strings.TrimRight(ep, "/") + "/v1/traces"
	} else {
		return Config{}, false, nil
	}
	cfg.ServiceName = strings.TrimSpace(getenv("OTEL_SERVICE_NAME"))
	cfg.Protocol = strings.TrimSpace(first(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"))
	if t := strings.TrimSpace(first(getenv, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")); t != "" {
		ms, err := strconv.ParseUint(t, 10, 31)
		if err != nil {
			return Config{}, true, fmt.Errorf("OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT %q is not a number of milliseconds", t)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	cfg.Headers = http.Header{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		if err := parseHeaders(getenv(name), cfg.Headers); err != nil {
			return Config{}, true, fmt.Errorf("%s: %w", name, err)
		}
	}
	return cfg, true, cfg.validate()
}

// first is the value of the first variable of names that is set.
func first(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// parseHeaders adds the key=value pairs of list to h; a later list overrides a key of an
// earlier one.
func parseHeaders(list string, h http.Header) error {
	seen := map[string]bool{}
	for i, entry := range strings.Split(list, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		k, v, found := strings.Cut(entry, "=")
		k = strings.TrimSpace(k)
		if !found || k == "" {
			return fmt.Errorf("entry %d is not key=value", i+1)
		}
		val, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return fmt.Errorf("the value of %q is not percent-encoded correctly", k)
		}
		if !validHeaderName(k) || strings.ContainsAny(val, "\r\n\x00") {
			return fmt.Errorf("%q is not a valid HTTP header", k)
		}
		ck := http.CanonicalHeaderKey(k)
		if !seen[ck] {
			h.Del(ck)
			seen[ck] = true
		}
		h.Add(ck, val)
	}
	return nil
}

// validHeaderName reports whether k is an HTTP token (RFC 9110).
func validHeaderName(k string) bool {
	for _, c := range k {
		if c > 0x7e || c <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, c) {
			return false
		}
	}
	return true
}

func (c Config) validate() error {
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("the OTLP endpoint %q is not an http:// or https:// URL", c.RedactedEndpoint())
	}
	return nil
}

// RedactedEndpoint is the endpoint with any password in it masked, for logs and errors.
func (c Config) RedactedEndpoint() string {
	u, err := url.Parse(c.Endpoint)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}
