package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"

	"github.com/coachd/coachd"
)

// Backup writes a consistent copy of the SQLite database to path while
// the database is in use: VACUUM INTO reads one snapshot (what the WAL
// holds included) in a read transaction, so writers go on meanwhile, and
// writes one self-contained file. The file is created owner-only, as the
// database is, and must not exist. PostgreSQL has pg_dump.
func (db *DB) Backup(ctx context.Context, path string) error {
	if db.dialect != dialectSQLite {
		return coachd.Errorf(coachd.EINVALID, "backup copies SQLite databases: back PostgreSQL up with pg_dump")
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return coachd.Errorf(coachd.ECONFLICT, "%s already exists: backup writes a new file", path)
	}
	if err != nil {
		return internal(err, "backup: create %s", path)
	}
	f.Close()
	// The readers are query_only, which VACUUM INTO refuses: a connection
	// of its own, which writes nothing to the database.
	conn, err := sql.Open("sqlite", "file:"+uriPath.Replace(db.path)+"?_pragma=busy_timeout(10000)")
	if err == nil {
		_, err = conn.ExecContext(ctx, `VACUUM INTO ?`, path)
		conn.Close()
	}
	if err != nil {
		os.Remove(path)
		return internal(err, "backup to %s", path)
	}
	return nil
}
