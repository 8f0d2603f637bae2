package coachd

import "regexp"

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// ExpandEnv resolves the ${NAME} and ${NAME:-default} references of a pack
// file's value with getenv; missing is called for a NAME that has neither
// a value nor a default (it is replaced by "").
func ExpandEnv(s string, getenv func(string) string, missing func(name string)) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v := getenv(m[1]); v != "" {
			return v
		}
		if m[2] != "" {
			return m[2][2:]
		}
		missing(m[1])
		return ""
	})
}
