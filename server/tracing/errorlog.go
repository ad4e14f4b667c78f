package tracing

import (
	"log/slog"
	"sync"
	"time"
)

// errorLogEvery is the shortest time between two logged OpenTelemetry errors.
const errorLogEvery = time.Minute

// errorLog is the OpenTelemetry error handler: a collector that is down fails every
// export, so it logs the first error and then at most one a minute, with how many it held
// back in between.
type errorLog struct {
	logger *slog.Logger
	now    func() time.Time

	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func newErrorLog(logger *slog.Logger, now func() time.Time) *errorLog {
	return &errorLog{logger: logger, now: now}
}

// Handle logs err unless another was logged less than errorLogEvery ago.
func (l *errorLog) Handle(err error) {
	l.mu.Lock()
	now := l.now()
	if !l.last.IsZero() && now.Sub(l.last) < errorLogEvery {
		l.suppressed++
		l.mu.Unlock()
		return
	}
	held := l.suppressed
	l.last, l.suppressed = now, 0
	l.mu.Unlock()
	l.logger.Warn("OpenTelemetry traces not sent", "error", err, "errors_not_logged", held)
}
