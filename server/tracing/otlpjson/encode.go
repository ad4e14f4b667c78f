// Package otlpjson is an OpenTelemetry span exporter that sends OTLP over HTTP with the
// JSON encoding (POST to /v1/traces, Content-Type application/json): the protobuf JSON
// mapping of an ExportTraceServiceRequest, with trace and span ids in hex, field names in
// lowerCamelCase, 64-bit integers as decimal strings and enums as numbers, as the OTLP
// specification requires. It needs only the OpenTelemetry SDK and the standard library,
// not the protobuf and gRPC packages the official otlptracehttp exporter links.
package otlpjson

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// The JSON shape of opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest and the
// messages inside it (opentelemetry-proto, trace/v1, common/v1, resource/v1).
type (
	exportRequest struct {
		ResourceSpans []*resourceSpans `json:"resourceSpans"`
	}
	resourceSpans struct {
		Resource   resourceJSON  `json:"resource"`
		ScopeSpans []*scopeSpans `json:"scopeSpans"`
		SchemaURL  string        `json:"schemaUrl,omitempty"`
	}
	resourceJSON struct {
		Attributes []keyValue `json:"attributes,omitempty"`
	}
	scopeSpans struct {
		Scope     scopeJSON `json:"scope"`
		Spans     []span    `json:"spans"`
		SchemaURL string    `json:"schemaUrl,omitempty"`
	}
	scopeJSON struct {
		Name       string     `json:"name,omitempty"`
		Version    string     `json:"version,omitempty"`
		Attributes []keyValue `json:"attributes,omitempty"`
	}
	span struct {
		TraceID                string     `json:"traceId"`
		SpanID                 string     `json:"spanId"`
		TraceState             string     `json:"traceState,omitempty"`
		ParentSpanID           string     `json:"parentSpanId,omitempty"`
		Flags                  uint32     `json:"flags,omitempty"`
		Name                   string     `json:"name"`
		Kind                   int        `json:"kind,omitempty"`
		StartTimeUnixNano      string     `json:"startTimeUnixNano"`
		EndTimeUnixNano        string     `json:"endTimeUnixNano"`
		Attributes             []keyValue `json:"attributes,omitempty"`
		DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
		Events                 []event    `json:"events,omitempty"`
		DroppedEventsCount     uint32     `json:"droppedEventsCount,omitempty"`
		Links                  []link     `json:"links,omitempty"`
		DroppedLinksCount      uint32     `json:"droppedLinksCount,omitempty"`
		Status                 *status    `json:"status,omitempty"`
	}
	event struct {
		TimeUnixNano           string     `json:"timeUnixNano"`
		Name                   string     `json:"name"`
		Attributes             []keyValue `json:"attributes,omitempty"`
		DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
	}
	link struct {
		TraceID                string     `json:"traceId"`
		SpanID                 string     `json:"spanId"`
		TraceState             string     `json:"traceState,omitempty"`
		Attributes             []keyValue `json:"attributes,omitempty"`
		DroppedAttributesCount uint32     `json:"droppedAttributesCount,omitempty"`
		Flags                  uint32     `json:"flags,omitempty"`
	}
	status struct {
		Message string `json:"message,omitempty"`
		Code    int    `json:"code,omitempty"`
	}
	keyValue struct {
		Key   string   `json:"key"`
		Value anyValue `json:"value"`
	}
	// anyValue sets exactly one field (none for an empty value); the pointers tell a
	// false or "" apart from an absent field.
	anyValue struct {
		StringValue *string         `json:"stringValue,omitempty"`
		BoolValue   *bool           `json:"boolValue,omitempty"`
		IntValue    string          `json:"intValue,omitempty"`
		DoubleValue json.RawMessage `json:"doubleValue,omitempty"`
		ArrayValue  *arrayValue     `json:"arrayValue,omitempty"`
		KvlistValue *kvlistValue    `json:"kvlistValue,omitempty"`
		BytesValue  string          `json:"bytesValue,omitempty"`
	}
	arrayValue struct {
		Values []anyValue `json:"values"`
	}
	kvlistValue struct {
		Values []keyValue `json:"values"`
	}
)

// Span flags of OTLP (trace/v1 SpanFlags): the W3C trace flags in the low byte, then
// whether the parent's remoteness is known and whether it is remote.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// Marshal encodes spans as the JSON body of one OTLP trace export request, spans grouped by
// resource and instrumentation scope.
func Marshal(spans []sdktrace.ReadOnlySpan) ([]byte, error) {
	type scopeKey struct {
		res   *resource.Resource
		name  string
		ver   string
		url   string
		attrs attribute.Distinct
	}
	var req exportRequest
	byRes := map[*resource.Resource]*resourceSpans{}
	byScope := map[scopeKey]*scopeSpans{}
	for _, s := range spans {
		res := s.Resource()
		rs := byRes[res]
		if rs == nil {
			rs = &resourceSpans{}
			if res != nil {
				rs.Resource.Attributes = keyValues(res.Attributes())
				rs.SchemaURL = res.SchemaURL()
			}
			byRes[res] = rs
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		sc := s.InstrumentationScope()
		k := scopeKey{res, sc.Name, sc.Version, sc.SchemaURL, sc.Attributes.Equivalent()}
		ss := byScope[k]
		if ss == nil {
			ss = &scopeSpans{Scope: scopeOf(sc), SchemaURL: sc.SchemaURL}
			byScope[k] = ss
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		ss.Spans = append(ss.Spans, spanOf(s))
	}
	return json.Marshal(&req)
}

func scopeOf(sc instrumentation.Scope) scopeJSON {
	return scopeJSON{Name: sc.Name, Version: sc.Version, Attributes: keyValues(sc.Attributes.ToSlice())}
}

func spanOf(s sdktrace.ReadOnlySpan) span {
	sc := s.SpanContext()
	out := span{
		TraceID:                sc.TraceID().String(),
		SpanID:                 sc.SpanID().String(),
		TraceState:             sc.TraceState().String(),
		Flags:                  uint32(sc.TraceFlags()) | flagHasIsRemote,
		Name:                   s.Name(),
		Kind:                   spanKind(s.SpanKind()),
		StartTimeUnixNano:      unixNano(s.StartTime()),
		EndTimeUnixNano:        unixNano(s.EndTime()),
		Attributes:             keyValues(s.Attributes()),
		DroppedAttributesCount: count(s.DroppedAttributes()),
		DroppedEventsCount:     count(s.DroppedEvents()),
		DroppedLinksCount:      count(s.DroppedLinks()),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		out.ParentSpanID = p.SpanID().String()
		if p.IsRemote() {
			out.Flags |= flagIsRemote
		}
	}
	for _, e := range s.Events() {
		out.Events = append(out.Events, event{
			TimeUnixNano: unixNano(e.Time), Name: e.Name,
			Attributes: keyValues(e.Attributes), DroppedAttributesCount: count(e.DroppedAttributeCount),
		})
	}
	for _, l := range s.Links() {
		flags := uint32(l.SpanContext.TraceFlags()) | flagHasIsRemote
		if l.SpanContext.IsRemote() {
			flags |= flagIsRemote
		}
		out.Links = append(out.Links, link{
			TraceID: l.SpanContext.TraceID().String(), SpanID: l.SpanContext.SpanID().String(),
			TraceState: l.SpanContext.TraceState().String(), Flags: flags,
			Attributes: keyValues(l.Attributes), DroppedAttributesCount: count(l.DroppedAttributeCount),
		})
	}
	if st := s.Status(); st.Code != codes.Unset {
		out.Status = &status{Message: st.Description, Code: statusCode(st.Code)}
	}
	return out
}

// spanKind maps to Span.SpanKind of OTLP; an unspecified kind is internal, as the SDK
// records it.
func spanKind(k trace.SpanKind) int {
	switch k {
	case trace.SpanKindServer:
		return 2
	case trace.SpanKindClient:
		return 3
	case trace.SpanKindProducer:
		return 4
	case trace.SpanKindConsumer:
		return 5
	default:
		return 1
	}
}

// statusCode maps to Status.StatusCode of OTLP, where Ok is 1 and Error 2 (codes.Code has
// them the other way round).
func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return 1
	case codes.Error:
		return 2
	default:
		return 0
	}
}

func unixNano(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatInt(t.UnixNano(), 10)
}

func count(n int) uint32 {
	if n < 0 {
		return 0
	}
	if n > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}

func keyValues(attrs []attribute.KeyValue) []keyValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make([]keyValue, len(attrs))
	for i, a := range attrs {
		out[i] = keyValue{Key: string(a.Key), Value: valueOf(a.Value)}
	}
	return out
}

func valueOf(v attribute.Value) anyValue {
	switch v.Type() {
	case attribute.BOOL:
		b := v.AsBool()
		return anyValue{BoolValue: &b}
	case attribute.INT64:
		return anyValue{IntValue: strconv.FormatInt(v.AsInt64(), 10)}
	case attribute.FLOAT64:
		return anyValue{DoubleValue: double(v.AsFloat64())}
	case attribute.STRING:
		s := v.AsString()
		return anyValue{StringValue: &s}
	case attribute.BOOLSLICE:
		return array(v.AsBoolSlice(), func(b bool) anyValue { return anyValue{BoolValue: &b} })
	case attribute.INT64SLICE:
		return array(v.AsInt64Slice(), func(n int64) anyValue { return anyValue{IntValue: strconv.FormatInt(n, 10)} })
	case attribute.FLOAT64SLICE:
		return array(v.AsFloat64Slice(), func(f float64) anyValue { return anyValue{DoubleValue: double(f)} })
	case attribute.STRINGSLICE:
		return array(v.AsStringSlice(), func(s string) anyValue { return anyValue{StringValue: &s} })
	case attribute.BYTESLICE:
		return anyValue{BytesValue: base64.StdEncoding.EncodeToString(v.AsByteSlice())}
	case attribute.SLICE:
		return array(v.AsSlice(), valueOf)
	case attribute.MAP:
		return anyValue{KvlistValue: &kvlistValue{Values: keyValues(v.AsMap())}}
	default:
		return anyValue{}
	}
}

func array[T any](xs []T, conv func(T) anyValue) anyValue {
	out := &arrayValue{Values: make([]anyValue, len(xs))}
	for i, x := range xs {
		out.Values[i] = conv(x)
	}
	return anyValue{ArrayValue: out}
}

// double is a float in the protobuf JSON mapping: a number, or "NaN", "Infinity" and
// "-Infinity", which JSON numbers cannot hold.
func double(f float64) json.RawMessage {
	switch {
	case math.IsNaN(f):
		return json.RawMessage(`"NaN"`)
	case math.IsInf(f, 1):
		return json.RawMessage(`"Infinity"`)
	case math.IsInf(f, -1):
		return json.RawMessage(`"-Infinity"`)
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
}
