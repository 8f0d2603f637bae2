package datasource

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/filecap"
)

// Set is a pack's data sources together: one query_data tool over all
// their tables, a tool per named query and per action.
type Set struct {
	sources []*Source
	tables  map[string]*table
	order   []*table
	tools   []coachd.Tool
	clock   coachd.Clock
}

// Load opens the data files of the pack in dir (paths relative to it,
// e.g. data/app.yaml) and checks them against their databases. getenv
// resolves ${NAME} in DSNs. Every problem is reported, one
// "path:line: message" per line of the error.
func Load(ctx context.Context, dir string, paths []string, getenv func(string) string, clock coachd.Clock) (*Set, error) {
	if clock == nil {
		clock = coachd.SystemClock{}
	}
	set := &Set{tables: map[string]*table{}, clock: clock}
	// The pack's files, and a relative sqlite: path, are read inside it:
	// no link or .. leads out (filecap.ErrLeadsOut).
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var all []string
	for _, path := range paths {
		probs := &problems{path: path}
		data, err := filecap.ReadIn(root, filepath.FromSlash(path), maxFile)
		if err != nil {
			probs.add(0, "%v", err)
		} else if sp := parse(path, data, getenv, probs); sp != nil && len(probs.list) == 0 {
			src := &Source{name: strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)), spec: sp}
			src.open(ctx, root, filepath.Dir(filepath.FromSlash(path)), probs)
			set.sources = append(set.sources, src)
			for _, t := range src.tables {
				if set.tables[t.name] != nil {
					probs.add(1, "table %s is declared by two data files: table names are unique in a pack", t.name)
					continue
				}
				set.tables[t.name] = t
				set.order = append(set.order, t)
			}
		}
		all = append(all, probs.list...)
	}
	if len(all) > 0 {
		set.Close()
		return nil, errors.New(strings.Join(all, "\n"))
	}
	if err := set.buildTools(); err != nil {
		set.Close()
		return nil, err
	}
	return set, nil
}

// maxFile bounds a data file, as agent.MaxPackFile does the pack's
// other files: far above a real one, and what a mistaken path (a log, a
// dump) is refused at.
const maxFile = 1 << 20

// UserKeys maps each data source's name to what its scope columns hold
// for a user: id, name or subject (user_key).
func (s *Set) UserKeys() map[string]string {
	keys := make(map[string]string, len(s.sources))
	for _, src := range s.sources {
		keys[src.name] = src.spec.userKey
	}
	return keys
}

// Close closes every connection.
func (s *Set) Close() error {
	var errs []error
	for _, src := range s.sources {
		errs = append(errs, src.Close())
	}
	return errors.Join(errs...)
}

// Tools returns query_data, the named queries and the actions.
func (s *Set) Tools() []coachd.Tool { return s.tools }

// Schema describes the tables, queries and actions.
func (s *Set) Schema() coachd.DataSchema {
	out := coachd.DataSchema{Tables: []coachd.DataTable{}, Queries: []coachd.DataQuery{}, Actions: []coachd.DataAction{}}
	for _, t := range s.order {
		dt := coachd.DataTable{Source: t.src.name, Name: t.name, Description: t.description, Scope: t.scope,
			Shared: t.shared, Access: coachd.DataRead}
		if len(t.write) > 0 {
			dt.Access = coachd.DataReadWrite
		}
		names := append([]string(nil), t.read...)
		for _, c := range t.written {
			if !t.readable(c) {
				names = append(names, c)
			}
		}
		for _, c := range names {
			dt.Columns = append(dt.Columns, coachd.DataColumn{Name: c, Type: t.types[c], Read: t.readable(c), Write: t.write[c]})
		}
		out.Tables = append(out.Tables, dt)
	}
	for _, src := range s.sources {
		for _, q := range src.spec.queries {
			out.Queries = append(out.Queries, coachd.DataQuery{Name: q.name, Description: q.description, Table: q.table})
		}
		for _, a := range src.spec.actions {
			da := coachd.DataAction{Name: a.name, Tag: strings.ToUpper(a.name), Description: a.description,
				Table: a.table, Kind: a.kind}
			for _, v := range a.values {
				da.Columns = append(da.Columns, v.column)
			}
			out.Actions = append(out.Actions, da)
		}
	}
	sort.Slice(out.Actions, func(i, j int) bool { return out.Actions[i].Name < out.Actions[j].Name })
	return out
}

// Prompt renders the schema for the system prompt within budget bytes,
// from the declaration and the database's own column types: with types
// when they fit, without them otherwise, then as many tables as fit.
func (s *Set) Prompt(budget int) string {
	sc := s.Schema()
	for _, typed := range []bool{true, false} {
		if p := prompt(sc, typed, len(sc.Tables)); len(p) <= budget {
			return p
		}
	}
	for n := len(sc.Tables) - 1; n > 0; n-- {
		if p := prompt(sc, false, n); len(p) <= budget {
			return p
		}
	}
	// Whole lines, as many as fit.
	p := prompt(sc, false, 0)
	for len(p) > budget {
		i := strings.LastIndexByte(strings.TrimSuffix(p, "\n"), '\n')
		if i < 0 {
			return ""
		}
		p = p[:i+1]
	}
	return p
}

func prompt(sc coachd.DataSchema, typed bool, tables int) string {
	var b strings.Builder
	b.WriteString("The app's data. Read it with query_data {table, columns, where, order_by, limit}: " +
		"where is {column: value} or {column: {op: value}} with op one of eq, ne, lt, lte, gt, gte, like (contains), in (a list); " +
		"order_by lists columns, -column for descending. Rows of per-user tables are this user's only.\n\nTables:\n")
	for i, t := range sc.Tables {
		if i == tables {
			fmt.Fprintf(&b, "- … %d more tables (query_data names them)\n", len(sc.Tables)-tables)
			break
		}
		kind := "per user"
		if t.Shared {
			kind = "shared"
		}
		var cols []string
		for _, c := range t.Columns {
			if !c.Read {
				continue
			}
			if typed && c.Type != "" {
				cols = append(cols, c.Name+" "+c.Type)
			} else {
				cols = append(cols, c.Name)
			}
		}
		fmt.Fprintf(&b, "- %s (%s): %s", t.Name, kind, strings.Join(cols, ", "))
		if t.Description != "" {
			b.WriteString(". " + strings.TrimSuffix(t.Description, "."))
		}
		b.WriteString("\n")
	}
	if len(sc.Queries) > 0 {
		b.WriteString("\nNamed queries (tools):\n")
		for _, q := range sc.Queries {
			fmt.Fprintf(&b, "- %s: %s\n", q.Name, q.Description)
		}
	}
	if len(sc.Actions) > 0 {
		b.WriteString("\nWrites happen only through these actions (a tool call, or an action tag [NAME: {json}] where the agent uses tags):\n")
		for _, a := range sc.Actions {
			fmt.Fprintf(&b, "- %s / %s (%s %s): %s\n", a.Name, a.Tag, a.Kind, a.Table, a.Description)
		}
	}
	return b.String()
}
