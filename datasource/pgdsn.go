package datasource

import (
	"database/sql"
	"errors"
	"net/url"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/coachd/coachd/internal/envsecret"
)

// pgDSN is a data file's Postgres URL as pgx is handed it: its password
// percent-encoded (envsecret.EscapePassword). A URL net/url cannot parse
// is refused without quoting it.
func pgDSN(dsn string) (string, error) {
	if escaped, ok := envsecret.EscapePassword(dsn); ok {
		return escaped, nil
	}
	return "", errors.New("not a valid URL (write @ : / ? # and % in a user name or password percent-encoded, @ as %40)")
}

// openDB opens dsn with driver. A Postgres DSN logs in with the password
// it carries itself, or none: the driver's libpq defaults would add
// coachd's own PGPASSWORD or passfile entry, sent to whatever host the
// pack names (in clear, if that server asks so).
func openDB(driver, dsn string) (*sql.DB, error) {
	if driver != "pgx" {
		return sql.Open(driver, dsn)
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.Password = ""
	if u, err := url.Parse(dsn); err == nil {
		if pw, ok := u.User.Password(); ok {
			cfg.Password = pw
		}
		if q := u.Query(); q.Has("password") {
			cfg.Password = q.Get("password")
		}
	}
	return stdlib.OpenDB(*cfg), nil
}
