// Package datasource makes an app's own database a source of context and
// actions for its coaches. A pack declares it in data/<name>.yaml: a DSN,
// the tables and columns the coach may read and the column that scopes
// rows to the coachd user, named queries, and actions (declared inserts
// and updates). coachd builds every statement itself, parameterised, from
// those declarations: the model chooses among declared names and supplies
// values, never SQL. Reads run on a read-only connection with a row cap
// and a time cap; writes run one statement in a transaction, limited to
// the user's rows.
package datasource

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/yamlerr"
	"gopkg.in/yaml.v3"
)

// Defaults and bounds of a data source.
const (
	DefaultMaxRows = 50
	MaxMaxRows     = 500
	DefaultTimeout = 2 * time.Second
	MaxTimeout     = 30 * time.Second
	// MaxResultBytes bounds one tool result; rows past it are cut.
	MaxResultBytes = 32 << 10
	// maxCell bounds one value in a result.
	maxCell = 2000
	// maxCandidates bounds a fuzzy match's candidate list.
	maxCandidates = 5
)

var (
	identRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,62}$`)
	nameRe  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
)

// spec is a data file as declared, with the line of each part for
// problems.
type spec struct {
	path    string
	dsn     string
	dsnLine int
	userKey string
	maxRows int
	timeout time.Duration
	tables  []*tableSpec
	queries []*querySpec
	actions []*actionSpec
}

type tableSpec struct {
	name, description string
	line              int
	scope             string
	scopeLine         int
	shared            bool
	columns           []string
	columnLines       []int
}

type querySpec struct {
	name, description, table string
	line                     int
	columns                  []string
	where                    map[string]value // column → value ($input refs)
	orderBy                  []string
	limit                    int
	inputSchema              json.RawMessage
}

type actionSpec struct {
	name, description, table string
	line                     int
	kind                     string   // insert | update
	values                   []assign // insert: the row; update: set
	key                      string
	match                    []matchSpec
	where                    map[string]value
	inputSchema              json.RawMessage
}

type assign struct {
	column string
	value  value
	line   int
}

type matchSpec struct {
	input, column string
	fuzzy         bool
}

// value is a declared value: a literal, an input field ($name) or one of
// $now, $uuid, $user.
type value struct {
	ref     string // input field, or "" for a literal
	special string // now | uuid | user
	literal any
}

// problems collects "path:line: message" lines.
type problems struct {
	path string
	list []string
}

// add records one problem as one line: the pack loader reads the
// joined list line by line, so a message with a line break (a name
// quoted from the file, a YAML decoding error) would split into a
// second problem without its file and line.
func (p *problems) add(line int, format string, args ...any) {
	msg := oneLine.Replace(fmt.Sprintf(format, args...))
	p.list = append(p.list, fmt.Sprintf("%s:%d: %s", p.path, line, msg))
}

var oneLine = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(p.list, "\n"))
}

// parse reads a data file. Every problem found is reported.
func parse(path string, data []byte, getenv func(string) string, probs *problems) *spec {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		for _, p := range yamlerr.Problems(err, 0) {
			probs.add(p.Line, "%s", p.Msg)
		}
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		probs.add(1, "a data file is a YAML mapping")
		return nil
	}
	s := &spec{path: path, userKey: "id", maxRows: DefaultMaxRows, timeout: DefaultTimeout}
	eachKey(doc.Content[0], probs, func(k, v *yaml.Node) {
		switch k.Value {
		case "dsn":
			s.dsnLine = v.Line
			s.dsn = coachd.ExpandEnv(v.Value, getenv, func(name string) {
				if coachd.OwnEnv(name) {
					probs.add(v.Line, "dsn: %s", coachd.EnvProblem(name))
					return
				}
				probs.add(v.Line, "dsn: environment variable %s is not set (write ${%s:-default} for a default)", name, name)
			})
			if s.dsn == "" {
				probs.add(v.Line, "dsn is required: sqlite:<file> or postgres://...")
			}
		case "user_key":
			s.userKey = v.Value
			switch v.Value {
			case "id", "name", "subject":
			default:
				probs.add(v.Line, "user_key must be id, name or subject (the identity provider's sub)")
			}
		case "max_rows":
			n, err := strconv.Atoi(v.Value)
			if err != nil || n < 1 || n > MaxMaxRows {
				probs.add(v.Line, "max_rows must be 1 to %d", MaxMaxRows)
			}
			s.maxRows = max(1, min(n, MaxMaxRows))
		case "timeout":
			d, err := time.ParseDuration(v.Value)
			if err != nil || d <= 0 || d > MaxTimeout {
				probs.add(v.Line, "timeout must be a duration up to %s", MaxTimeout)
			} else {
				s.timeout = d
			}
		case "tables":
			eachKey(v, probs, func(k, v *yaml.Node) { s.tables = append(s.tables, parseTable(k, v, probs)) })
		case "queries":
			eachKey(v, probs, func(k, v *yaml.Node) { s.queries = append(s.queries, parseQuery(k, v, probs)) })
		case "actions":
			eachKey(v, probs, func(k, v *yaml.Node) { s.actions = append(s.actions, parseAction(k, v, probs)) })
		default:
			probs.add(k.Line, "unknown key %q", k.Value)
		}
	})
	if s.dsnLine == 0 {
		probs.add(1, "dsn is required: sqlite:<file> or postgres://...")
	}
	if len(s.tables) == 0 {
		probs.add(1, "tables: declare at least one table")
	}
	return s
}

func parseTable(k, v *yaml.Node, probs *problems) *tableSpec {
	t := &tableSpec{name: k.Value, line: k.Line}
	if !identRe.MatchString(t.name) {
		probs.add(k.Line, "table %q: not a plain SQL name", t.name)
	}
	eachKey(v, probs, func(k, v *yaml.Node) {
		switch k.Value {
		case "description":
			t.description = v.Value
		case "scope":
			t.scope, t.scopeLine = v.Value, v.Line
			if !identRe.MatchString(v.Value) {
				probs.add(v.Line, "scope %q: not a plain SQL name", v.Value)
			}
		case "shared":
			if err := v.Decode(&t.shared); err != nil {
				probs.add(v.Line, "shared must be true or false")
			}
		case "columns":
			for _, c := range seq(v, probs) {
				if !identRe.MatchString(c.Value) {
					probs.add(c.Line, "column %q: not a plain SQL name", c.Value)
					continue
				}
				t.columns = append(t.columns, c.Value)
				t.columnLines = append(t.columnLines, c.Line)
			}
		default:
			probs.add(k.Line, "unknown key %q", k.Value)
		}
	})
	if len(t.columns) == 0 {
		probs.add(k.Line, "table %s: list the columns the coach may read", t.name)
	}
	if t.scope == "" && !t.shared {
		probs.add(k.Line, "table %s: give the column that scopes rows to the user (scope: user_id), or mark it shared: true", t.name)
	}
	return t
}

func parseQuery(k, v *yaml.Node, probs *problems) *querySpec {
	q := &querySpec{name: k.Value, line: k.Line, where: map[string]value{}}
	if !nameRe.MatchString(q.name) {
		probs.add(k.Line, "query %q: a tool name is lowercase letters, digits and underscores", q.name)
	}
	eachKey(v, probs, func(k, v *yaml.Node) {
		switch k.Value {
		case "description":
			q.description = v.Value
		case "table":
			q.table = v.Value
		case "columns":
			q.columns = names(v, probs)
		case "where":
			q.where = values(v, probs)
		case "order_by":
			q.orderBy = names(v, probs)
		case "limit":
			// 0 (not given) is the source's max_rows; check compares
			// a limit with it.
			n, err := strconv.Atoi(v.Value)
			if err != nil || n < 1 {
				probs.add(k.Line, "query %s: limit must be 1 to max_rows", q.name)
			}
			q.limit = max(n, 0)
		case "input_schema":
			q.inputSchema = schemaJSON(v, probs)
		default:
			probs.add(k.Line, "unknown key %q", k.Value)
		}
	})
	if strings.TrimSpace(q.description) == "" {
		probs.add(k.Line, "query %s: description is required (the model reads it)", q.name)
	}
	return q
}

func parseAction(k, v *yaml.Node, probs *problems) *actionSpec {
	a := &actionSpec{name: k.Value, line: k.Line, where: map[string]value{}}
	if !nameRe.MatchString(a.name) {
		probs.add(k.Line, "action %q: a tool name is lowercase letters, digits and underscores", a.name)
	}
	assigns := func(v *yaml.Node) []assign {
		var out []assign
		eachKey(v, probs, func(k, v *yaml.Node) {
			out = append(out, assign{column: k.Value, value: parseValue(v, probs), line: k.Line})
		})
		return out
	}
	eachKey(v, probs, func(k, v *yaml.Node) {
		if (k.Value == "insert" || k.Value == "update") && a.kind != "" {
			// The second would silently replace the first.
			probs.add(k.Line, "action %s: give insert or update, not both", a.name)
		}
		switch k.Value {
		case "description":
			a.description = v.Value
		case "table":
			a.table = v.Value
		case "insert":
			a.kind, a.values = "insert", assigns(v)
		case "update":
			a.kind = "update"
			eachKey(v, probs, func(k, v *yaml.Node) {
				switch k.Value {
				case "key":
					a.key = v.Value
				case "set":
					a.values = assigns(v)
				case "where":
					a.where = values(v, probs)
				case "match":
					if v.Kind != yaml.SequenceNode {
						probs.add(v.Line, "match: expected a list")
						break
					}
					for _, m := range v.Content {
						if m.Kind == yaml.MappingNode {
							for i := 0; i+1 < len(m.Content); i += 2 {
								if key := m.Content[i]; !slices.Contains([]string{"input", "column", "fuzzy"}, key.Value) {
									// A misspelt fuzzy would silently match exactly only.
									probs.add(key.Line, "match: unknown key %q", key.Value)
								}
							}
						}
						var ms struct {
							Input  string `yaml:"input"`
							Column string `yaml:"column"`
							Fuzzy  bool   `yaml:"fuzzy"`
						}
						if err := m.Decode(&ms); err != nil || ms.Input == "" || ms.Column == "" {
							probs.add(m.Line, "match: each entry is {input: <field>, column: <column>, fuzzy: true|false}")
							continue
						}
						a.match = append(a.match, matchSpec{ms.Input, ms.Column, ms.Fuzzy})
					}
				default:
					probs.add(k.Line, "unknown key %q", k.Value)
				}
			})
		case "input_schema":
			a.inputSchema = schemaJSON(v, probs)
		default:
			probs.add(k.Line, "unknown key %q", k.Value)
		}
	})
	if strings.TrimSpace(a.description) == "" {
		probs.add(k.Line, "action %s: description is required (the model reads it)", a.name)
	}
	switch {
	case a.kind == "":
		probs.add(k.Line, "action %s: give insert: {column: value} or update: {key, match, set}", a.name)
	case len(a.values) == 0:
		probs.add(k.Line, "action %s: it writes no column", a.name)
	case a.kind == "update" && (a.key == "" || len(a.match) == 0):
		probs.add(k.Line, "action %s: an update needs key: (the row's key column) and match: (how the input names the row)", a.name)
	}
	if a.inputSchema == nil {
		probs.add(k.Line, "action %s: input_schema is required", a.name)
	}
	return a
}

// parseValue reads a declared value: "$field" is an input field, $now,
// $uuid and $user are computed, "$$..." is a literal "$...", anything
// else is a literal.
func parseValue(v *yaml.Node, probs *problems) value {
	if v.Kind != yaml.ScalarNode {
		probs.add(v.Line, "a value is a scalar: a literal or $field")
		return value{}
	}
	if v.Tag == "!!str" || v.Style != 0 {
		s := v.Value
		switch {
		case strings.HasPrefix(s, "$$"):
			return value{literal: s[1:]}
		case s == "$now" || s == "$uuid" || s == "$user":
			return value{special: s[1:]}
		case strings.HasPrefix(s, "$"):
			if !nameRe.MatchString(s[1:]) && !identRe.MatchString(s[1:]) {
				probs.add(v.Line, "%q: an input field reference is $ and the field's name", s)
			}
			return value{ref: s[1:]}
		}
		return value{literal: s}
	}
	var lit any
	if err := v.Decode(&lit); err != nil {
		probs.add(v.Line, "%v", err)
	}
	return value{literal: lit}
}

// schemaJSON converts an input_schema YAML node to JSON.
func schemaJSON(v *yaml.Node, probs *problems) json.RawMessage {
	var x any
	if err := v.Decode(&x); err != nil {
		probs.add(v.Line, "input_schema: %v", err)
		return nil
	}
	b, err := json.Marshal(x)
	if err != nil || v.Kind != yaml.MappingNode {
		probs.add(v.Line, "input_schema must be a JSON Schema object")
		return nil
	}
	return b
}

// values reads a mapping of column: value.
func values(n *yaml.Node, probs *problems) map[string]value {
	out := map[string]value{}
	eachKey(n, probs, func(k, v *yaml.Node) { out[k.Value] = parseValue(v, probs) })
	return out
}

// names reads a list of names.
func names(n *yaml.Node, probs *problems) []string {
	var out []string
	for _, c := range seq(n, probs) {
		out = append(out, c.Value)
	}
	return out
}

// eachKey calls fn for each key of a mapping node, in order.
func eachKey(n *yaml.Node, probs *problems, fn func(k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		probs.add(n.Line, "expected a mapping")
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i], n.Content[i+1])
	}
}

// seq returns the scalar items of a sequence node.
func seq(n *yaml.Node, probs *problems) []*yaml.Node {
	if n.Kind != yaml.SequenceNode {
		probs.add(n.Line, "expected a list")
		return nil
	}
	var out []*yaml.Node
	for _, c := range n.Content {
		if c.Kind != yaml.ScalarNode {
			probs.add(c.Line, "expected a name")
			continue
		}
		out = append(out, c)
	}
	return out
}
