package redisl2

import (
	"context"
	"math"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// gcra is the generic cell rate algorithm on one key: the key holds the theoretical
// arrival time (TAT, milliseconds) of the next call. A call is admitted when now is not
// earlier than TAT - burst*interval; then TAT moves on by one interval. Refused calls change
// nothing and learn how long to wait.
//
// Built on first use: serve over stdio links this package but must not pay for it.
var gcra = sync.OnceValue(func() *redis.Script { return redis.NewScript(gcraScript) })

const gcraScript = `
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local allow_at = tat + interval - burst * interval
if now < allow_at then
  return {0, math.ceil(allow_at - now)}
end
local new_tat = tat + interval
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil(new_tat - now) + 1)
return {1, 0}
`

// Admit takes one call from the shared bucket key (rate calls per second, bursts of
// burst): every replica draws from the same bucket. It returns how long to wait when the
// call is refused. err is set when Redis could not answer; the caller then applies its
// own, local bucket.
func (s *Store) Admit(ctx context.Context, key string, rate float64, burst int) (wait time.Duration, ok bool, err error) {
	if rate <= 0 || math.IsInf(rate, 1) {
		return 0, true, nil
	}
	interval := 1000 / rate // milliseconds per call
	now := float64(s.now().UnixNano()) / 1e6
	var res []int64
	err = s.do(ctx, "rate_limit", func(ctx context.Context) error {
		var err error
		res, err = gcra().Run(ctx, s.rdb, []string{s.key("rl", hexKey(key))}, interval, max(burst, 1), now).Int64Slice()
		return err
	})
	if err != nil {
		return 0, false, err
	}
	if len(res) != 2 {
		return 0, true, nil
	}
	if res[0] == 1 {
		return 0, true, nil
	}
	return time.Duration(res[1]) * time.Millisecond, false, nil
}
