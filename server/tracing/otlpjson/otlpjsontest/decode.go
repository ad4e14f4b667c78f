// Package otlpjsontest decodes OTLP/HTTP JSON trace exports with the official OTLP protobuf
// messages (go.opentelemetry.io/proto/otlp) and protojson, for tests: it is how they check
// that otlpjson's output is what a collector reads. Only tests import it, so the binary
// does not link protobuf.
package otlpjsontest

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// idLengths are the byte lengths of the id fields that OTLP/JSON writes in hex where the
// protobuf JSON mapping would write base64.
var idLengths = map[string]int{"traceId": 16, "spanId": 8, "parentSpanId": 8}

// Decode strictly decodes an ExportTraceServiceRequest in OTLP JSON: unknown fields are an
// error, and every trace and span id must be lowercase hex of the right length.
func Decode(body []byte) (*coltrace.ExportTraceServiceRequest, error) {
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	if err := hexToBase64(doc); err != nil {
		return nil, err
	}
	canonical, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var req coltrace.ExportTraceServiceRequest
	if err := (protojson.UnmarshalOptions{}).Unmarshal(canonical, &req); err != nil {
		return nil, err
	}
	return &req, nil
}

// hexToBase64 rewrites the id fields of the decoded JSON doc in place to the base64 that
// protojson expects for bytes.
func hexToBase64(doc any) error {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			if n, ok := idLengths[k]; ok {
				s, _ := x.(string)
				b, err := hex.DecodeString(s)
				if err != nil || len(b) != n || hex.EncodeToString(b) != s {
					return fmt.Errorf("%s %q is not %d bytes in lowercase hex", k, s, n)
				}
				v[k] = base64.StdEncoding.EncodeToString(b)
				continue
			}
			if err := hexToBase64(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := hexToBase64(x); err != nil {
				return err
			}
		}
	}
	return nil
}
