package coachd

// An app's own database is a data source a pack declares (data/*.yaml):
// the tables and columns its coaches may read, the column that scopes rows
// to the coachd user, and the actions (declared inserts and updates) that
// are the only way they write. These types describe it to clients
// (GET /v1/schema) and to the model (the data_schema context section).

// Data access of a table.
const (
	DataRead      = "read"
	DataReadWrite = "read_write"
)

// DataSchema is what a pack's data sources expose.
type DataSchema struct {
	Tables  []DataTable  `json:"tables"`
	Queries []DataQuery  `json:"queries"`
	Actions []DataAction `json:"actions"`
}

// DataTable is one table a coach may read.
type DataTable struct {
	Source      string `json:"source"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Scope is the column holding the coachd user's key: reads of a
	// per-user table and every write are limited to the user's rows.
	Scope string `json:"scope,omitempty"`
	// Shared tables (market data) are read whole; writes stay scoped.
	Shared  bool         `json:"shared"`
	Access  string       `json:"access"` // DataRead or DataReadWrite
	Columns []DataColumn `json:"columns"`
}

// DataColumn is a column of a DataTable: its type as the database reports
// it, whether the coach may read it and whether an action writes it.
type DataColumn struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Read  bool   `json:"read"`
	Write bool   `json:"write"`
}

// DataQuery is a named read a pack declares; it is a tool of its own.
type DataQuery struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Table       string `json:"table"`
}

// DataAction is a declared write; it is a tool, and an action tag
// ([DEACTIVATE_EVENT: {...}]) for agents with action_tags.
type DataAction struct {
	Name        string   `json:"name"`
	Tag         string   `json:"tag"`
	Description string   `json:"description"`
	Table       string   `json:"table"`
	Kind        string   `json:"kind"` // insert or update
	Columns     []string `json:"columns"`
}
