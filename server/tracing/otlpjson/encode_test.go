package otlpjson_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/r2r-mcp/r2r-mcp/server/tracing/otlpjson"
	"github.com/r2r-mcp/r2r-mcp/server/tracing/otlpjson/otlpjsontest"
)

var (
	traceID  = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	spanID   = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	parentID = trace.SpanID{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}
	linkedID = trace.SpanID{0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88}
	start    = time.Unix(1700000000, 123456789)
)

func str(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}
func i64(n int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: n}}
}
func f64(f float64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
}
func boolean(b bool) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
}
func arr(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}
func kv(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

// Every field a span of the SDK can carry comes out as the OTLP protobuf message says, read
// back with the official messages and protojson.
func TestMarshalDecodesAsOTLP(t *testing.T) {
	res := resource.NewSchemaless(attribute.String("service.name", "r2r-mcp"))
	scope := instrumentation.Scope{Name: "github.com/r2r-mcp/r2r-mcp", Version: "1.2.3"}
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: parentID, Remote: true, TraceFlags: trace.FlagsSampled})
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: linkedID})
	stubs := tracetest.SpanStubs{
		{
			Name:        "tools/call r2r_search",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled}),
			Parent:      parent,
			SpanKind:    trace.SpanKindServer,
			StartTime:   start,
			EndTime:     start.Add(1500 * time.Microsecond),
			Attributes: []attribute.KeyValue{
				attribute.String("s", ""), attribute.Bool("b", false), attribute.Int64("i", math.MinInt64),
				attribute.Float64("f", 0.25), attribute.Float64("nan", math.NaN()), attribute.Float64("inf", math.Inf(-1)),
				attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, math.MaxInt64}),
				attribute.BoolSlice("bs", []bool{true}), attribute.Float64Slice("fs", []float64{1.5}),
			},
			Events:            []sdktrace.Event{{Name: "retry", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int("attempt", 2)}, DroppedAttributeCount: 1}},
			Links:             []sdktrace.Link{{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "batch")}}},
			Status:            sdktrace.Status{Code: codes.Error, Description: "rate_limited"},
			DroppedAttributes: 3, DroppedEvents: 4, DroppedLinks: 5,
			Resource:             res,
			InstrumentationScope: scope,
		},
		{
			Name:        "r2r search",
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: linkedID}),
			SpanKind:    trace.SpanKindClient,
			StartTime:   start, EndTime: start,
			Status:               sdktrace.Status{Code: codes.Ok},
			Resource:             res,
			InstrumentationScope: scope,
		},
	}
	body, err := otlpjson.Marshal(stubs.Snapshots())
	if err != nil {
		t.Fatal(err)
	}
	got, err := otlpjsontest.Decode(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	want := &tracepb.ResourceSpans{
		Resource: nil, // compared below
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: scope.Name, Version: scope.Version},
			Spans: []*tracepb.Span{
				{
					TraceId: traceID[:], SpanId: spanID[:], ParentSpanId: parentID[:],
					Flags: 0x01 | 0x100 | 0x200, Name: "tools/call r2r_search", Kind: tracepb.Span_SPAN_KIND_SERVER,
					StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.Add(1500 * time.Microsecond).UnixNano()),
					Attributes: []*commonpb.KeyValue{
						kv("s", str("")), kv("b", boolean(false)), kv("i", i64(math.MinInt64)), kv("f", f64(0.25)),
						kv("nan", f64(math.NaN())), kv("inf", f64(math.Inf(-1))),
						kv("ss", arr(str("a"), str("b"))), kv("is", arr(i64(1), i64(math.MaxInt64))),
						kv("bs", arr(boolean(true))), kv("fs", arr(f64(1.5))),
					},
					DroppedAttributesCount: 3,
					Events: []*tracepb.Span_Event{{TimeUnixNano: uint64(start.Add(time.Millisecond).UnixNano()), Name: "retry",
						Attributes: []*commonpb.KeyValue{kv("attempt", i64(2))}, DroppedAttributesCount: 1}},
					DroppedEventsCount: 4,
					Links: []*tracepb.Span_Link{{TraceId: traceID[:], SpanId: linkedID[:], Flags: 0x100,
						Attributes: []*commonpb.KeyValue{kv("why", str("batch"))}}},
					DroppedLinksCount: 5,
					Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "rate_limited"},
				},
				{
					TraceId: traceID[:], SpanId: linkedID[:], Flags: 0x100, Name: "r2r search", Kind: tracepb.Span_SPAN_KIND_CLIENT,
					StartTimeUnixNano: uint64(start.UnixNano()), EndTimeUnixNano: uint64(start.UnixNano()),
					Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
				},
			},
		}},
	}
	if len(got.ResourceSpans) != 1 {
		t.Fatalf("%d resource spans, want 1:\n%s", len(got.ResourceSpans), body)
	}
	rs := got.ResourceSpans[0]
	if a := rs.GetResource().GetAttributes(); len(a) != 1 || !proto.Equal(a[0], kv("service.name", str("r2r-mcp"))) {
		t.Errorf("resource %v", rs.GetResource())
	}
	rs.Resource = nil
	// NaN is not equal to itself; compare the doubles' JSON forms instead of proto.Equal.
	if g, w := protojson.Format(rs), protojson.Format(want); g != w {
		t.Errorf("decoded export differs:\n got %s\nwant %s\nbody %s", g, w, body)
	}

	// 64-bit integers are strings in OTLP JSON, where the protobuf mapping also allows numbers.
	var raw struct {
		ResourceSpans []struct {
			ScopeSpans []struct {
				Spans []struct {
					StartTimeUnixNano json.RawMessage
					Attributes        []struct {
						Value struct{ IntValue json.RawMessage }
					}
				}
			}
		}
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		t.Fatal(err)
	}
	s := raw.ResourceSpans[0].ScopeSpans[0].Spans[0]
	if string(s.StartTimeUnixNano) != `"1700000000123456789"` || string(s.Attributes[2].Value.IntValue) != `"-9223372036854775808"` {
		t.Errorf("int64 fields %s, %s are not decimal strings", s.StartTimeUnixNano, s.Attributes[2].Value.IntValue)
	}
}

// Spans of different resources and scopes go in separate groups, in the order first seen.
func TestMarshalGroupsByResourceAndScope(t *testing.T) {
	resA := resource.NewSchemaless(attribute.String("service.name", "a"))
	resB := resource.NewSchemaless(attribute.String("service.name", "b"))
	sc := func(id byte) trace.SpanContext {
		return trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: trace.SpanID{id}})
	}
	stubs := tracetest.SpanStubs{
		{Name: "1", SpanContext: sc(1), Resource: resA, InstrumentationScope: instrumentation.Scope{Name: "x"}},
		{Name: "2", SpanContext: sc(2), Resource: resB, InstrumentationScope: instrumentation.Scope{Name: "x"}},
		{Name: "3", SpanContext: sc(3), Resource: resA, InstrumentationScope: instrumentation.Scope{Name: "y"}},
		{Name: "4", SpanContext: sc(4), Resource: resA, InstrumentationScope: instrumentation.Scope{Name: "x"}},
	}
	body, err := otlpjson.Marshal(stubs.Snapshots())
	if err != nil {
		t.Fatal(err)
	}
	got, err := otlpjsontest.Decode(body)
	if err != nil {
		t.Fatal(err)
	}
	var groups []string
	for _, rs := range got.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			g := rs.Resource.Attributes[0].Value.GetStringValue() + "/" + ss.Scope.Name + ":"
			for _, s := range ss.Spans {
				g += s.Name
			}
			groups = append(groups, g)
		}
	}
	if want := []string{"a/x:14", "a/y:3", "b/x:2"}; len(groups) != len(want) || groups[0] != want[0] || groups[1] != want[1] || groups[2] != want[2] {
		t.Errorf("groups %v, want %v", groups, want)
	}
}
