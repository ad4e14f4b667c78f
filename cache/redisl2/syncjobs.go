package redisl2

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// PutSyncJob stores the state of a sync job under key for ttl (tools.SyncJobStore).
func (s *Store) PutSyncJob(key string, state []byte, ttl time.Duration) error {
	return s.do(context.Background(), "sync_job", func(ctx context.Context) error {
		return s.rdb.Set(ctx, s.key("sync", hexKey(key)), state, ttl).Err()
	})
}

// SyncJob returns the state of the sync job under key; nil when there is none
// (tools.SyncJobStore).
func (s *Store) SyncJob(key string) ([]byte, error) {
	var out []byte
	err := s.do(context.Background(), "sync_job", func(ctx context.Context) error {
		b, err := s.rdb.Get(ctx, s.key("sync", hexKey(key))).Bytes()
		out = b
		return err
	})
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	return out, err
}
