package datasource

import (
	"errors"

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
