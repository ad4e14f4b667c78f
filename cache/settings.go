package cache

import "time"

// Settings are the result cache's serve knobs (see server/knob): its size and how long
// each kind of result stays.
type Settings struct {
	// MaxBytes bounds the heap the cached values hold; 0 = no cache. The default holds about
	// 1,500 ten-hit searches (about 10 KiB each).
	MaxBytes int64 `knob:"cache-size" unit:"bytes" default:"16MiB" zero:"off" help:"memory for cached results, e.g. 64MiB, 512KiB, 1GB; 0 disables the cache"`
	// TTLSearch, TTLRAG and TTLList are how long search results, RAG answers, and
	// listings and documents stay cached; 0 = that kind is not cached.
	TTLSearch time.Duration `knob:"cache-ttl-search" default:"5m" min:"0s" max:"24h" zero:"off" help:"how long search results stay cached; 0 = not cached"`
	TTLRAG    time.Duration `knob:"cache-ttl-rag" default:"2m" min:"0s" max:"24h" zero:"off" help:"how long RAG answers stay cached; 0 = not cached"`
	TTLList   time.Duration `knob:"cache-ttl-list" default:"1m" min:"0s" max:"24h" zero:"off" help:"how long document and collection listings and documents stay cached; 0 = not cached"`
}

// Config is s as New takes it.
func (s Settings) Config() Config {
	return Config{MaxBytes: s.MaxBytes, TTL: map[Kind]time.Duration{
		KindSearch: s.TTLSearch, KindRAG: s.TTLRAG, KindList: s.TTLList, KindDocument: s.TTLList,
	}}
}
