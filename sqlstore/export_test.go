package sqlstore

import "time"

// Rebind and TimeArg let the external tests' raw queries use the store's
// own placeholder and timestamp encodings.
func (db *DB) Rebind(q string) string { return db.dialect.rebind(q) }

func (db *DB) TimeArg(t time.Time) any { return db.dialect.timeArg(t) }
