package datasource

import (
	"errors"
	"net/url"
)

// pgDSN is a data file's Postgres URL as pgx is handed it: its password
// percent-encoded. A password may hold '@' (net/url and pgx read the user
// info to the last one), and pgx quotes a URL it cannot parse (a wrong
// sslmode, port or timeout) with the password masked only up to its
// first '@'. A URL net/url cannot parse is refused without quoting it or
// net/url's reason, which may hold the password
// (postgres://app:pw/x@host reads pw/x's start as a port).
func pgDSN(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("not a valid URL (write @ : / ? # and % in a user name or password percent-encoded, @ as %40)")
	}
	if pw, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), pw)
		return u.String(), nil
	}
	return dsn, nil
}
