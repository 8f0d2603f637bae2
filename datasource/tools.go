package datasource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/coachd/coachd"
)

// QueryDataTool is the name of the built-in read tool.
const QueryDataTool = "query_data"

// buildTools makes query_data, a tool per named query and per action.
func (s *Set) buildTools() error {
	var names, cols []string
	for _, t := range s.order {
		names = append(names, t.name)
		for _, c := range t.read {
			if !slices.Contains(cols, c) {
				cols = append(cols, c)
			}
		}
	}
	maxRows := 1
	for _, src := range s.sources {
		maxRows = max(maxRows, src.spec.maxRows)
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"table":    map[string]any{"type": "string", "enum": names},
			"columns":  map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": cols}, "maxItems": 100},
			"where":    map[string]any{"type": "object", "maxProperties": maxConditions},
			"order_by": map[string]any{"type": "array", "items": map[string]any{"type": "string", "maxLength": 64}, "maxItems": maxOrderBy},
			"limit":    map[string]any{"type": "integer", "minimum": 1, "maximum": maxRows},
		},
		"required":             []string{"table"},
		"additionalProperties": false,
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return err
	}
	s.tools = append(s.tools, &queryData{set: s, def: coachd.ToolDef{
		Name: QueryDataTool, Category: coachd.ToolInstant, InputSchema: raw,
		Description: "Read rows of the app's data (tables: " + strings.Join(names, ", ") + "). " +
			"Per-user tables return only this user's rows. where: {column: value} or {column: {op: value}}, " +
			"op one of eq, ne, lt, lte, gt, gte, like, in; order_by: [\"column\", \"-column\"]; limit caps the rows.",
	}})
	for _, src := range s.sources {
		for _, q := range src.spec.queries {
			schema := q.inputSchema
			if schema == nil {
				schema = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
			}
			s.tools = append(s.tools, &namedQuery{spec: q, path: src.spec.path, t: s.tables[q.table], clock: s.clock, def: coachd.ToolDef{
				Name: q.name, Description: q.description, InputSchema: schema, Category: coachd.ToolInstant}})
		}
		for _, a := range src.spec.actions {
			s.tools = append(s.tools, &actionTool{a: &action{spec: a, t: s.tables[a.table]}, path: src.spec.path, clock: s.clock, def: coachd.ToolDef{
				Name: a.name, Description: a.description, InputSchema: a.inputSchema, Category: coachd.ToolInstant}})
		}
	}
	return nil
}

// result turns an outcome into a tool result: a request the model can fix
// is an error result with its text; anything else is logged by the
// runner as a tool failure.
func result(text string, err error) (coachd.ToolResult, error) {
	var b errBad
	switch {
	case err == nil:
		return coachd.ToolResult{Content: text}, nil
	case errors.As(err, &b):
		return coachd.ToolResult{Content: b.msg, IsError: true}, nil
	case errors.Is(err, context.Canceled):
		return coachd.ToolResult{}, err
	}
	return coachd.ToolResult{Content: "the app's database failed: " + clip(err.Error()), IsError: true}, nil
}

// unlinked is the result for a user the data source cannot scope.
var unlinked = coachd.ToolResult{Content: "this account is not linked to the app's data", IsError: true}

type queryData struct {
	set *Set
	def coachd.ToolDef
}

func (q *queryData) Definition() coachd.ToolDef { return q.def }

func (q *queryData) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		Table   string          `json:"table"`
		Columns []string        `json:"columns"`
		Where   json.RawMessage `json:"where"`
		OrderBy []string        `json:"order_by"`
		Limit   int             `json:"limit"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return result("", bad("the input must be {table, columns, where, order_by, limit}"))
	}
	t := q.set.tables[in.Table]
	if t == nil {
		names := make([]string, len(q.set.order))
		for i, t := range q.set.order {
			names[i] = t.name
		}
		return result("", bad("unknown table %q; tables: %s", clip(in.Table), strings.Join(names, ", ")))
	}
	sel, err := q.plan(t, in.Columns, in.Where, in.OrderBy, in.Limit)
	if err != nil {
		return result("", err)
	}
	if sel.user = t.src.userKey(env.User); sel.user == "" && !t.shared {
		return unlinked, nil
	}
	return result(sel.run(ctx))
}

// plan checks a request against the table's declaration.
func (q *queryData) plan(t *table, cols []string, where json.RawMessage, orderBy []string, limit int) (*selectSpec, error) {
	sel := &selectSpec{t: t, columns: t.read, limit: t.src.spec.maxRows}
	if len(cols) > 0 {
		sel.columns = nil
		for _, c := range cols {
			if !t.readable(c) {
				return nil, bad("%q is not a column of %s; columns: %s", clip(c), t.name, strings.Join(t.read, ", "))
			}
			if !slices.Contains(sel.columns, c) {
				sel.columns = append(sel.columns, c)
			}
		}
	}
	conds, err := parseWhere(t, where)
	if err != nil {
		return nil, err
	}
	sel.conds = conds
	if len(orderBy) > maxOrderBy {
		return nil, bad("order_by: at most %d columns", maxOrderBy)
	}
	for _, o := range orderBy {
		if !t.readable(strings.TrimPrefix(o, "-")) {
			return nil, bad("order_by: %q is not a column of %s", clip(o), t.name)
		}
		sel.orderBy = append(sel.orderBy, o)
	}
	if limit > 0 {
		sel.limit = min(limit, t.src.spec.maxRows)
	}
	return sel, nil
}

type namedQuery struct {
	spec  *querySpec
	path  string // its data file's
	t     *table
	clock coachd.Clock
	def   coachd.ToolDef
}

// Origin is where the query is declared, for a pack problem naming it.
func (q *namedQuery) Origin() (string, int) { return q.path, q.spec.line }

func (q *namedQuery) Definition() coachd.ToolDef { return q.def }

func (q *namedQuery) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	in, err := input(call.Input)
	if err != nil {
		return result("", err)
	}
	sel := &selectSpec{t: q.t, columns: q.spec.columns, orderBy: q.spec.orderBy, limit: q.spec.limit}
	if len(sel.columns) == 0 {
		sel.columns = q.t.read
	}
	if sel.limit == 0 {
		sel.limit = q.t.src.spec.maxRows
	}
	if sel.user = q.t.src.userKey(env.User); sel.user == "" && !q.t.shared {
		return unlinked, nil
	}
	// A condition on an input field that was not given is left out.
	for col, v := range q.spec.where {
		if v.ref != "" {
			if x, ok := in[v.ref]; !ok || x == nil {
				continue
			}
		}
		x, err := resolve(v, in, sel.user, q.clock.Now())
		if err != nil {
			return result("", err)
		}
		if x == nil {
			sel.conds = append(sel.conds, cond{column: col, op: "null"})
		} else {
			sel.conds = append(sel.conds, cond{column: col, op: "=", args: []any{q.t.bindable(col, x)}})
		}
	}
	return result(sel.run(ctx))
}

type actionTool struct {
	a     *action
	path  string // its data file's
	clock coachd.Clock
	def   coachd.ToolDef
}

// Origin is where the action is declared, for a pack problem naming it.
func (t *actionTool) Origin() (string, int) { return t.path, t.a.spec.line }

func (t *actionTool) Definition() coachd.ToolDef { return t.def }

// CheckInput refuses an update that names its row by none of its match
// fields (the schema makes each optional, one of them being enough), so
// that validation says so before the action runs.
func (t *actionTool) CheckInput(raw json.RawMessage) error {
	if t.a.spec.kind != "update" || len(t.a.spec.match) == 0 {
		return nil
	}
	in, err := input(raw)
	if err != nil {
		return nil // the schema has checked it is an object
	}
	var names []string
	for _, m := range t.a.spec.match {
		if v, ok := in[m.input]; ok && v != nil && v != "" {
			return nil
		}
		names = append(names, m.input)
	}
	errs := make([]coachd.FieldError, len(names))
	for i, n := range names {
		errs[i] = coachd.FieldError{Field: n, Message: "name the row with one of: " + strings.Join(names, ", "), Code: "one_of"}
	}
	return coachd.Invalid(errs...)
}

func (t *actionTool) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	user := t.a.t.src.userKey(env.User)
	if user == "" {
		return unlinked, nil
	}
	if t.a.t.src.rw == nil {
		return coachd.ToolResult{}, fmt.Errorf("data source %s: no write connection", t.a.t.src.name)
	}
	return result(t.a.run(ctx, call.Input, user, t.clock.Now()))
}
