package datasource

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/coachd/coachd/internal/envsecret"
)

// pgDSN is a data file's Postgres URL as pgx is handed it: its password
// percent-encoded (envsecret.EscapePassword), its files checked
// (pgPackFiles). A URL net/url cannot parse is refused without quoting it.
func pgDSN(dsn string, root *os.Root, fileDir string) (string, error) {
	if escaped, ok := envsecret.EscapePassword(dsn); ok {
		return pgPackFiles(escaped, root, fileDir)
	}
	return "", errors.New("not a valid URL (write @ : / ? # and % in a user name or password percent-encoded, @ as %40)")
}

// hostFileKeys are the DSN keys with which pgx reads a file on coachd's
// host, or (sslcertmode) sends coachd's own client certificate: a pack
// from a shared repo could present coachd's key to a host it names, log
// in with it to coachd's own database, or read coachd's ~/.pgpass or
// service file.
var hostFileKeys = []string{"passfile", "service", "servicefile", "sslcert", "sslkey", "sslpassword", "sslcertmode"}

// pgPackFiles refuses a DSN naming a file on coachd's host and returns
// it with its sslrootcert, the one file a pack may name (its server's
// CA: `system`, or a file inside the pack, relative to the data file),
// as the absolute path pgx reads.
func pgPackFiles(dsn string, root *os.Root, fileDir string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", errors.New("not a valid URL")
	}
	q := u.Query()
	for _, k := range hostFileKeys {
		if q.Has(k) {
			return "", fmt.Errorf("%s reads a file on coachd's host: a data source's DSN names none (%s; sslrootcert is system or a file inside the pack)",
				k, strings.Join(hostFileKeys, ", "))
		}
	}
	if !q.Has("sslrootcert") {
		return dsn, nil
	}
	// Only sslrootcert is rewritten, in the query as written: pgx, as
	// libpq, reads no + as a space, so the rest is left alone.
	params := strings.Split(u.RawQuery, "&")
	for i, p := range params {
		k, ca, _ := strings.Cut(p, "=")
		if k, err = url.QueryUnescape(k); err != nil || k != "sslrootcert" {
			continue
		}
		if ca, err = url.PathUnescape(ca); err != nil {
			return "", errors.New("sslrootcert is not a valid URL query value")
		}
		if ca == "system" {
			continue
		}
		if filepath.IsAbs(ca) {
			return "", errors.New("sslrootcert names a file outside the pack: write system, or a file inside the pack relative to the data file")
		}
		if ca, err = packPath(root, fileDir, ca); err != nil {
			return "", fmt.Errorf("sslrootcert %s %v", filepath.Base(ca), err)
		}
		if st, err := os.Stat(ca); err != nil || !st.Mode().IsRegular() {
			return "", fmt.Errorf("sslrootcert %s is not a file inside the pack (tried %s)", filepath.Base(ca), ca)
		}
		params[i] = "sslrootcert=" + strings.ReplaceAll(url.PathEscape(ca), "&", "%26")
	}
	before, _, _ := strings.Cut(dsn, "?")
	return before + "?" + strings.Join(params, "&"), nil
}

// openDB opens dsn with driver. A Postgres DSN logs in with the password
// it carries itself, or none: the driver's libpq defaults would add
// coachd's own PGPASSWORD or passfile entry, sent to whatever host the
// pack names (in clear, if that server asks so). It dials no Unix
// socket (unixSocket) and sends no client certificate of coachd's
// (~/.postgresql, PGSSLCERT); pgx reads only the keys net/url found
// (pgPackFiles checked them): where the two parsers disagree, pgx
// refuses before it reads any file.
func openDB(driver, dsn string) (*sql.DB, error) {
	if driver != "pgx" {
		return sql.Open(driver, dsn)
	}
	allowed := []string{"host", "port", "user", "password", "dbname"}
	u, uerr := url.Parse(dsn)
	if uerr == nil {
		for k := range u.Query() {
			if !slices.Contains(hostFileKeys, k) {
				allowed = append(allowed, k)
			}
		}
	}
	cfg, err := pgx.ParseConfigWithOptions(dsn, pgx.ParseConfigOptions{
		ParseConfigOptions: pgconn.ParseConfigOptions{ConnStringAllowedKeys: allowed},
	})
	if err != nil {
		return nil, err
	}
	if unixSocket(cfg) {
		return nil, errors.New("a Unix socket (a host that is a path, or no host: the local socket) logs in as coachd's own OS user: name a TCP host (127.0.0.1 for this machine)")
	}
	cfg.SSLCertMode = "disable"
	cfg.Password = ""
	if uerr == nil {
		if pw, ok := u.User.Password(); ok {
			cfg.Password = pw
		}
		if q := u.Query(); q.Has("password") {
			cfg.Password = q.Get("password")
		}
	}
	return stdlib.OpenDB(*cfg), nil
}

// unixSocket reports whether cfg dials a Unix socket, where the server's
// peer authentication takes coachd's OS user for the login.
func unixSocket(cfg *pgx.ConnConfig) bool {
	if n, _ := pgconn.NetworkAddress(cfg.Host, cfg.Port); n == "unix" {
		return true
	}
	for _, fb := range cfg.Fallbacks {
		if n, _ := pgconn.NetworkAddress(fb.Host, fb.Port); n == "unix" {
			return true
		}
	}
	return false
}
