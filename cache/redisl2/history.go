package redisl2

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// historyTTL is how long a user's search history is kept after their last search.
const historyTTL = 30 * 24 * time.Hour

// PushHistory puts entry first in the list key, keeping size entries (tools.HistoryStore).
func (s *Store) PushHistory(key string, entry []byte, size int) error {
	k := s.key("hist", hexKey(key))
	return s.do(context.Background(), "history", func(ctx context.Context) error {
		_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.LPush(ctx, k, entry)
			p.LTrim(ctx, k, 0, int64(size-1))
			p.Expire(ctx, k, historyTTL)
			return nil
		})
		return err
	})
}

// History returns the newest size entries of the list key (tools.HistoryStore).
func (s *Store) History(key string, size int) ([][]byte, error) {
	var out [][]byte
	err := s.do(context.Background(), "history", func(ctx context.Context) error {
		vals, err := s.rdb.LRange(ctx, s.key("hist", hexKey(key)), 0, int64(size-1)).Result()
		for _, v := range vals {
			out = append(out, []byte(v))
		}
		return err
	})
	return out, err
}
