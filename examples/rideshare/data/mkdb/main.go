// Command mkdb builds the rideshare pack's sample database
// (examples/rideshare/data/rideshare.db) from rideshare.sql, from the
// repository's root:
//
//	go run ./examples/rideshare/data/mkdb [-o FILE]
//
// It refuses to overwrite an existing file unless -force is given.
package main

import (
	"database/sql"
	"flag"
	"fmt"
	"os"

	_ "modernc.org/sqlite"
)

func main() {
	src := flag.String("sql", "examples/rideshare/data/rideshare.sql", "the SQL to run")
	out := flag.String("o", "examples/rideshare/data/rideshare.db", "the database file to write")
	force := flag.Bool("force", false, "replace an existing file")
	flag.Parse()
	if err := build(*src, *out, *force); err != nil {
		fmt.Fprintln(os.Stderr, "mkdb:", err)
		os.Exit(1)
	}
	fmt.Println("wrote", *out)
}

func build(src, path string, force bool) error {
	schema, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); err == nil {
		if !force {
			return fmt.Errorf("%s exists (use -force to replace it)", path)
		}
		if err := os.Remove(path); err != nil {
			return err
		}
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(string(schema)); err != nil {
		os.Remove(path)
		return err
	}
	return db.Close()
}
