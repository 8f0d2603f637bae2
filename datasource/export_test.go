package datasource

import "context"

// ExecReadOnly runs stmt the way reads run (a read-only connection and
// transaction), for tests that show it cannot write.
func ExecReadOnly(s *Set, stmt string) error {
	src := s.sources[0]
	tx, err := src.begin(context.Background(), src.ro, true)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(stmt); err != nil {
		return err
	}
	return tx.Commit()
}

// OwnTables lists coachd's own tables, which no data source declares.
var OwnTables = ownTables
