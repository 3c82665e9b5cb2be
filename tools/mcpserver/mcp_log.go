package mcpserver

import (
	"context"
	"log/slog"
)

// infoAsDebug passes records on to its handler with INFO lowered to DEBUG
// (see NewMCPHandler). Other levels keep theirs.
type infoAsDebug struct{ slog.Handler }

func lowerInfo(level slog.Level) slog.Level {
	if level >= slog.LevelInfo && level < slog.LevelWarn {
		return slog.LevelDebug
	}
	return level
}

func (h infoAsDebug) Enabled(ctx context.Context, level slog.Level) bool {
	return h.Handler.Enabled(ctx, lowerInfo(level))
}

func (h infoAsDebug) Handle(ctx context.Context, r slog.Record) error {
	r.Level = lowerInfo(r.Level)
	return h.Handler.Handle(ctx, r)
}

func (h infoAsDebug) WithAttrs(attrs []slog.Attr) slog.Handler {
	return infoAsDebug{h.Handler.WithAttrs(attrs)}
}

func (h infoAsDebug) WithGroup(name string) slog.Handler {
	return infoAsDebug{h.Handler.WithGroup(name)}
}
