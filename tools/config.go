package tools

import "time"

// Config is the tools' immutable configuration: every copy of Deps (one per user over
// HTTP) shares it as it is. A field tagged knob is a serve flag with an environment twin,
// its default and bounds (see server/knob); the others take their default tag.
//
// Every tool answers within 50 s, since clients give up around 60 s: no deadline may be
// longer.
type Config struct {
	// RateLimit and RateBurst are every tool's token bucket, RAGRateLimit and RAGRateBurst
	// those of the tools of rate class RateLLM (RAG: it costs R2R an LLM call). A rate of 0 sets no limit. A call over
	// the limit is answered at once with an isError result (code -32004) that says when to
	// retry; it never waits.
	RateLimit    float64 `knob:"rate-limit" default:"10" min:"0" max:"10000" zero:"off" help:"calls per second per tool that reach R2R (token bucket; cache hits are never refused); 0 = no limit; excess calls get -32004 with retry_after"`
	RateBurst    int     `knob:"rate-burst" default:"20" min:"1" max:"100000" help:"calls per tool allowed at once above --rate-limit"`
	RAGRateLimit float64 `knob:"rag-rate-limit" default:"2" min:"0" max:"10000" zero:"off" help:"the same for r2r_rag_query; 0 = no limit"`
	RAGRateBurst int     `knob:"rag-rate-burst" default:"5" min:"1" max:"100000" help:"r2r_rag_query calls allowed at once above --rag-rate-limit"`

	// SearchTimeout bounds r2r_search.
	SearchTimeout time.Duration `knob:"timeout-search" default:"20s" min:"1ms" max:"50s" help:"deadline of r2r_search"`
	// RAGTimeout bounds r2r_rag_query.
	RAGTimeout time.Duration `knob:"timeout-rag" default:"45s" min:"1ms" max:"50s" help:"deadline of r2r_rag_query"`
	// CallTimeout bounds a call of every tool without a deadline of its own and every
	// resource read.
	CallTimeout time.Duration `knob:"timeout" default:"15s" min:"1ms" max:"50s" help:"deadline of every tool without one of its own; r2r_ingest_document with run_async=false has 45s"`
	// IngestSyncTimeout bounds r2r_ingest_document with run_async=false: the upload, then
	// up to IngestWait of polling, with room to answer.
	IngestSyncTimeout time.Duration `default:"45s"`
	// IngestWait bounds how long r2r_ingest_document with run_async=false waits for R2R to
	// finish; it is further capped by the call's deadline.
	IngestWait time.Duration `default:"40s"`
	// PollInterval is the first delay between ingestion status polls (doubling up to 2 s).
	PollInterval time.Duration `default:"250ms"`

	// SyncStateDir keeps r2r_sync's lock and hash cache files; "" = kbsync.StateDir().
	SyncStateDir string

	// Status are the facts r2r_status reports.
	Status StatusInfo
}

// rateLimits are c's token buckets by rate class.
func (c Config) rateLimits() RateLimits {
	limit := func(rate float64, burst int) RateLimit {
		if rate <= 0 {
			return RateLimit{}
		}
		return RateLimit{Rate: rate, Burst: max(burst, 1)}
	}
	return RateLimits{Default: limit(c.RateLimit, c.RateBurst),
		PerClass: map[RateClass]RateLimit{RateLLM: limit(c.RAGRateLimit, c.RAGRateBurst)}}
}
