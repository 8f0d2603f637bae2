package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

// revision is the commit when the build has no VCS information of its
// own (the Dockerfile's context leaves .git out): -ldflags
// "-X main.revision=…", the Dockerfile's REVISION.
var revision = ""

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "Usage: coachd version\n\nPrints the version, the VCS revision it was built from, and the Go version.")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionString())
	return nil
}

func versionString() string {
	v, rev, when, dirty := version, "", "", false
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "" {
		rev = revision
	}
	out := "coachd " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if dirty {
			rev += "-dirty"
		}
		out += " (" + rev
		if when != "" {
			out += " " + when
		}
		out += ")"
	}
	return out + " " + runtime.Version()
}
