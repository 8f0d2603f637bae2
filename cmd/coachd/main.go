// Command coachd serves tool-using AI coaches over HTTP.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coachd/coachd/sqlstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals()...)
	err := run(ctx, os.Args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		os.Exit(2) // the usage was already printed
	case errors.Is(err, errDrift):
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(3) // doctor checked and found drift: not a failure to check
	default:
		fmt.Fprintln(os.Stderr, errorLine(err))
		os.Exit(1)
	}
}

// stopSignals are the signals that stop a command gracefully: SIGINT,
// SIGTERM and SIGHUP, whose default (the process ends at once) would cut
// running turns when a terminal closes or an operator sends it meaning
// "reload", which coachd has none of. SIGHUP is left ignored when it was
// at start (nohup), as a handler would undo that.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// errorLine is how a command's failure is printed: "coachd: " once,
// though a coded error says it too, wrapped or not ("create user: coachd:
// conflict: …").
func errorLine(err error) string {
	return "coachd: " + strings.ReplaceAll(strings.TrimPrefix(err.Error(), "coachd: "), ": coachd: ", ": ")
}

// errUsage marks a command line that could not be understood; the usage
// has been printed to stderr.
var errUsage = errors.New("usage error")

const usage = `coachd serves tool-using AI coaches over HTTP.

Usage:
  coachd <command> [flags]

Commands:
  serve      start the HTTP server
  users      create and list users (API keys)
  migrate    apply database migrations
  backup     copy a live SQLite database to a new file
  doctor     check that every user's token totals equal the ledger
  chat       talk to a coach from the terminal
  fake-anthropic  serve a fake Anthropic API (for demos and load tests)
  bench      load-test a running coachd against the paced fake
  pack       validate or list a coach pack (agents, skills, tools)
  review     run the validator coach over a directory (exit 0: approved)
  mcp        serve a user's notes, files and coaches to an MCP client over stdio
  autobuild  the player/coach loop over a scratch copy of a directory
  version    print the version

Run "coachd <command> -h" for a command's flags.
`

// run is the whole program: main only wires the process to it, tests call
// it directly.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) < 2 {
		fmt.Fprint(stderr, usage)
		return errUsage
	}
	cmd, rest := args[1], args[2:]
	switch cmd {
	case "serve":
		return runServe(ctx, rest, getenv, stdout, stderr)
	case "users":
		return runUsers(ctx, rest, getenv, stdout, stderr)
	case "migrate":
		return runMigrate(ctx, rest, getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, rest, getenv, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, rest, getenv, stdout, stderr)
	case "chat":
		// The terminal client reads answers to interactive tools from the
		// process's stdin; tests call runChat with their own reader.
		return runChat(ctx, rest, getenv, os.Stdin, stdout, stderr)
	case "fake-anthropic":
		return runFake(ctx, rest, getenv, stdout, stderr)
	case "bench":
		return runBench(ctx, rest, getenv, stdout, stderr)
	case "version":
		return runVersion(rest, stdout, stderr)
	case "pack":
		return runPack(ctx, rest, getenv, stdout, stderr)
	case "review":
		return runReview(ctx, rest, getenv, stdout, stderr)
	case "mcp":
		// JSON-RPC on the process's stdin and stdout.
		return runMCP(ctx, rest, getenv, os.Stdin, stdout, stderr)
	case "autobuild":
		return runAutobuild(ctx, rest, getenv, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprintf(stderr, "coachd: unknown command %q\n\n%s", cmd, usage)
	return errUsage
}

// parseFlags parses args with fs. Help (-h) goes to stdout and returns
// done=true; a bad flag or a positional argument prints the error and the
// usage to stderr and returns errUsage.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (done bool, err error) {
	if done, err := parseFlagsArgs(fs, args, stdout, stderr); done || err != nil {
		return done, err
	}
	if fs.NArg() > 0 {
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "coachd %s: unexpected arguments: %s\n", fs.Name(), strings.Join(fs.Args(), " "))
		fs.Usage()
		return true, errUsage
	}
	return false, nil
}

// parseFlagsArgs is parseFlags for commands that take positional
// arguments (fs.Args).
func parseFlagsArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (done bool, err error) {
	fs.SetOutput(io.Discard)
	err = fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return true, nil
	case err != nil:
		fs.SetOutput(stderr)
		fmt.Fprintf(stderr, "coachd %s: %v\n", fs.Name(), err)
		fs.Usage()
		return true, errUsage
	}
	return false, nil
}

// newFlagSet returns a FlagSet whose usage prints the summary line, then
// the flags.
func newFlagSet(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\n\nFlags:\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// envOr returns the environment variable key, or def when it is unset.
func envOr(getenv func(string) string, key, def string) string {
	if v := getenv(key); v != "" {
		return v
	}
	return def
}

// envDefaults reads flags' defaults from the environment. A number, a
// duration or a switch it cannot read is not replaced by the built-in
// default: it is kept, and the command refuses it once its flags are
// parsed (check), as it refuses the same value given as the flag.
type envDefaults struct {
	getenv func(string) string
	bad    []string
}

// Int is key as a flag.Int64 reads it, or def when key is unset.
func (e *envDefaults) Int(key string, def int64) int64 {
	return envRead(e, key, def, "an integer", func(v string) (int64, error) { return strconv.ParseInt(v, 0, 64) })
}

// Duration is key as a flag.Duration reads it, or def when key is unset.
func (e *envDefaults) Duration(key string, def time.Duration) time.Duration {
	return envRead(e, key, def, "a duration like 30s", time.ParseDuration)
}

// Bool is key as a flag.Bool reads it (1, true, 0, false...), false when
// key is unset.
func (e *envDefaults) Bool(key string) bool {
	return envRead(e, key, false, "1 or 0", strconv.ParseBool)
}

// envRead is key read by parse, or def when key is unset or parse cannot
// read it (then refused: want says what it should be).
func envRead[T any](e *envDefaults, key string, def T, want string, parse func(string) (T, error)) T {
	v := e.getenv(key)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil {
		e.refuse(key, v, want)
		return def
	}
	return x
}

// refuse notes a value that could not be read. It is shown in the error:
// only numbers, durations and switches are read here, never a secret.
func (e *envDefaults) refuse(key, v, want string) {
	e.bad = append(e.bad, fmt.Sprintf("%s=%q is not %s", key, v, want))
}

// check is the variables that could not be read, as one error.
func (e *envDefaults) check() error {
	if len(e.bad) == 0 {
		return nil
	}
	return errors.New(strings.Join(e.bad, "; "))
}

// dbFlag adds the --db flag every database command shares.
func dbFlag(fs *flag.FlagSet, getenv func(string) string) *string {
	p := new(string)
	urlVar(fs, p, "db", envOr(getenv, "COACHD_DB", "./coachd.db"),
		"SQLite `file`, or a postgres:// URL to use PostgreSQL (env COACHD_DB)")
	return p
}

// urlVar defines a string flag for a URL whose default may come from the
// environment with a password in it (a Postgres DSN, a gateway's base
// URL): -h shows the default with the password masked, as the startup
// log does.
func urlVar(fs *flag.FlagSet, p *string, name, value, usage string) {
	*p = value
	fs.Var(urlValue{p}, name, usage)
}

// urlValue is a string flag.Value whose String masks a password.
type urlValue struct{ p *string }

func (u urlValue) String() string {
	if u.p == nil {
		return ""
	}
	return maskDSN(*u.p)
}

func (u urlValue) Set(v string) error {
	*u.p = v
	return nil
}

// maskDSN hides the password of a URL (a postgres:// DSN, a gateway's base
// URL); a file path is shown as is.
func maskDSN(dsn string) string {
	if sqlstore.SchemelessURL(dsn) {
		// user:password@host/db, which Open refuses after serve logged
		// it: masked from the user's ':' to the last '@', as below.
		user, _, _ := strings.Cut(dsn, ":")
		return user + ":xxxxx" + dsn[strings.LastIndexByte(dsn, '@'):]
	}
	if !strings.Contains(dsn, "://") {
		// libpq's key=value form, which Open refuses after serve logged it.
		return keywordPassword.ReplaceAllString(dsn, "${1}xxxxx")
	}
	u, err := url.Parse(dsn)
	if scheme, rest, ok := strings.Cut(dsn, "://"); ok && (err != nil || u.User == nil) {
		// Left unescaped, a '/', '?', '#' or '%' in the password makes
		// net/url fail, or read the password as a port, and the DSN was
		// shown whole: mask from the user's ':' to the last '@'.
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if user, _, ok := strings.Cut(rest[:at], ":"); ok {
				dsn = scheme + "://" + user + ":xxxxx" + rest[at:]
				u, err = url.Parse(dsn)
			}
		}
	}
	if err != nil || u.Scheme == "" {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q, masked := u.Query(), false
	for k := range q {
		if secretParam(k) {
			q.Set(k, "xxxxx")
			masked = true
		}
	}
	if masked {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// secretParam reports whether a URL's query parameter may hold a secret:
// a password (pgx's password and sslpassword) or a gateway's key or token
// (key, api-key, access_token, …).
func secretParam(name string) bool {
	name = strings.ToLower(name)
	for _, w := range []string{"password", "secret", "token", "key"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// keywordPassword is the password of a key=value connection string.
var keywordPassword = regexp.MustCompile(`(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)`)

// secretVar defines a string flag whose default comes from the
// environment and is never printed: -h shows a flag's default, and a
// key's would be shown to whoever reads the help. The value is trimmed:
// one read from a file into the environment ends in a newline, which no
// header can carry.
func secretVar(fs *flag.FlagSet, p *string, name, value, usage string) {
	*p = strings.TrimSpace(value)
	fs.Var(secretValue{p}, name, usage)
}

// secretValue is a flag.Value whose String is always "", so no default is
// printed (flag takes "" for the zero value).
type secretValue struct{ p *string }

func (s secretValue) String() string { return "" }

func (s secretValue) Set(v string) error {
	*s.p = v
	return nil
}
