package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
)

const usersUsage = `Usage:
  coachd users create --name NAME [--budget TOKENS] [--db DSN] [--json]
  coachd users list [--db DSN]

create prints the new user's API key, alone, on stdout: it is stored only
hashed and cannot be shown again.
`

func runUsers(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usersUsage)
		return errUsage
	}
	switch args[0] {
	case "create":
		return runUsersCreate(ctx, args[1:], getenv, stdout, stderr)
	case "list":
		return runUsersList(ctx, args[1:], getenv, stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usersUsage)
		return nil
	}
	fmt.Fprintf(stderr, "coachd users: unknown command %q\n\n%s", args[0], usersUsage)
	return errUsage
}

func runUsersCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users create", "Usage: coachd users create --name NAME [--budget TOKENS] [--db DSN] [--json]\n\nCreates a user and prints its API key alone on stdout (with --json: {\"id\", \"name\", \"api_key\"}).")
	name := fs.String("name", "", "the user's name (required)")
	asJSON := fs.Bool("json", false, "print {id, name, api_key} as JSON instead of the key alone")
	budget := new(int64)
	env := &envDefaults{getenv: getenv}
	fs.Int64Var(budget, "budget", env.Int("COACHD_DEFAULT_BUDGET", defaultBudget), "token budget; 0 means no budget (402 unless an agent grants a free preview) (env COACHD_DEFAULT_BUDGET)")
	dsn := dbFlag(fs, getenv)
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if err := env.check(); err != nil {
		fmt.Fprintf(stderr, "coachd users create: %v\n", err)
		return errUsage
	}
	if n := utf8.RuneCountInString(*name); strings.TrimSpace(*name) == "" || n > server.UserNameMax {
		fmt.Fprintln(stderr, "coachd users create: --name is required (1 to 100 characters)")
		fs.SetOutput(stderr)
		fs.Usage()
		return errUsage
	}
	if *budget < 0 {
		fmt.Fprintln(stderr, "coachd users create: --budget must be 0 or more")
		return errUsage
	}
	db, err := openCurrentDB(ctx, *dsn, true)
	if err != nil {
		return err
	}
	defer db.Close()
	u := &coachd.User{Name: *name, TokenBudget: *budget}
	key, err := server.CreateUser(ctx, db, u)
	if err != nil {
		return fmt.Errorf("create user: %w", err)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(map[string]string{"id": u.ID, "name": u.Name, "api_key": key})
	}
	fmt.Fprintln(stdout, key)
	return nil
}

func runUsersList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("users list", "Usage: coachd users list [--db DSN]\n\nLists every user with its budget and usage.")
	return withDB(ctx, fs, args, getenv, stdout, stderr, true, func(db *sqlstore.DB, _ string) error {
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tTOKEN_BUDGET\tTOKENS_USED\tCREATED")
		err := eachUser(ctx, db, func(u *coachd.User) bool {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\n", u.ID, shownName(u.Name), u.TokenBudget, u.TokensUsed, u.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"))
			return true
		})
		if err != nil {
			return err
		}
		return tw.Flush()
	})
}

// shownName is a user name as users list prints it: quoted, escapes and
// all, when it holds a character that is not printable (a newline or a
// tab would forge a row of the table, an escape sequence drive the
// operator's terminal). Names come from the admin API and from end users'
// JWT name claims, which nothing else restricts.
func shownName(name string) string {
	if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(name)
	}
	return name
}

// eachUser calls fn with every user, a page at a time, until fn returns
// false.
func eachUser(ctx context.Context, store coachd.UserService, fn func(*coachd.User) bool) error {
	page := coachd.Page{Limit: coachd.MaxPageLimit}
	for {
		users, next, err := store.ListUsers(ctx, page)
		if err != nil {
			return fmt.Errorf("list users: %w", err)
		}
		for _, u := range users {
			if !fn(u) {
				return nil
			}
		}
		if next == "" {
			return nil
		}
		page.Cursor = next
	}
}
