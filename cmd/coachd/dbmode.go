package main

import (
	"log/slog"
	"os"
	"strings"
)

// warnOpenMode warns when the SQLite file at dsn (and so its -wal and
// -shm files, which SQLite makes with its mode) may be read by others
// than its owner: coachd makes a new file owner-only, but keeps the
// mode of one made before it did or restored with a looser one. The
// file holds every user's conversations.
func warnOpenMode(logger *slog.Logger, dsn string) {
	if strings.Contains(dsn, "://") {
		return
	}
	for _, p := range []string{dsn, dsn + "-wal", dsn + "-shm"} {
		fi, err := os.Stat(p)
		if err == nil && fi.Mode().Perm()&0o077 != 0 {
			logger.Warn("database file is readable by other users: chmod 600 it (and its -wal and -shm files)",
				"file", p, "mode", fi.Mode().Perm().String())
			return
		}
	}
}
