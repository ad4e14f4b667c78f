package tracing_test

import (
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/r2r-mcp/r2r-mcp/server/tracing"
)

// FromEnv follows the OpenTelemetry exporter variables: the traces endpoint as is, the
// general one with /v1/traces, headers percent-decoded with the traces-specific list
// winning, the traces protocol over the general one; errors quote no header value.
func TestFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		wantOK  bool
		want    tracing.Config
		wantErr string
	}{
		{name: "nothing set", env: map[string]string{"OTEL_SERVICE_NAME": "x"}},
		{name: "general endpoint", wantOK: true,
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example:4318/"},
			want: tracing.Config{Endpoint: "https://otel.example:4318/v1/traces", Headers: http.Header{}}},
		{name: "endpoint with a path", wantOK: true,
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://gw.example/otlp"},
			want: tracing.Config{Endpoint: "http://gw.example/otlp/v1/traces", Headers: http.Header{}}},
		{name: "traces endpoint wins", wantOK: true,
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://b:4318/traces",
				"OTEL_SERVICE_NAME": " kb ", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json",
				"OTEL_EXPORTER_OTLP_TIMEOUT": "2500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "500"},
			want: tracing.Config{Endpoint: "http://b:4318/traces", Headers: http.Header{}, ServiceName: "kb", Protocol: "http/json",
				Timeout: 500 * time.Millisecond}},
		{name: "bad timeout", wantOK: true, wantErr: `"5s" is not a number of milliseconds`,
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TIMEOUT": "5s"}},
		{name: "headers", wantOK: true,
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318",
				"OTEL_EXPORTER_OTLP_HEADERS":        "api-key=k%3D1, x-tenant = t1 ,,x-tenant=t2",
				"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-tenant=traces", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
			want: tracing.Config{Endpoint: "http://a:4318/v1/traces", Protocol: "http/protobuf",
				Headers: http.Header{"Api-Key": {"k=1"}, "X-Tenant": {"traces"}}}},
		{name: "header without =", wantOK: true, wantErr: "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=secret1,secret2"}},
		{name: "bad percent-encoding", wantOK: true, wantErr: `value of "authorization" is not percent-encoded`,
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "authorization=secret%G1"}},
		{name: "bad header name", wantOK: true, wantErr: `"x y" is not a valid HTTP header`,
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_HEADERS": "x y=secret"}},
		{name: "header value with a newline", wantOK: true, wantErr: "not a valid HTTP header",
			env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "OTEL_EXPORTER_OTLP_HEADERS": "a=secret%0Ax"}},
		{name: "no scheme", wantOK: true, wantErr: "not an http:// or https:// URL",
			env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "otel:4318"}},
		{name: "password masked", wantOK: true, wantErr: "ftp://u:xxxxx@h",
			env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "ftp://u:secret@h/v1/traces"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := tracing.FromEnv(func(k string) string { return tc.env[k] })
			if ok != tc.wantOK {
				t.Fatalf("ok = %v", ok)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "secret") {
					t.Fatalf("error %v, want %q without a secret", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FromEnv = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
