package review

import (
	"regexp"
	"strings"
)

// listMark is a requirement's list number or bullet, as the brief and
// REQUIREMENTS files write them ("1. ", "- ").
var listMark = regexp.MustCompile(`^(?:\d+[.)]|[-*])\s+`)

// normRequirement is a requirement as coverage compares it: lower case,
// one space between words, no list mark, no final punctuation.
func normRequirement(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	return strings.TrimRight(listMark.ReplaceAllString(s, ""), ".;:,!")
}

// uncovered are the review's requirements an approval's
// requirements_verified does not name: each entry names one requirement,
// word for word or as a part of it (the seed's coach writes "Token
// refresh" for "Support token refresh") or the other way round.
func uncovered(reqs []string, verified []string) []string {
	used := make([]bool, len(verified))
	var missing []string
	for _, r := range reqs {
		nr, found := normRequirement(r), -1
		for pass := 0; pass < 2 && found < 0; pass++ { // word for word first
			for i, v := range verified {
				nv := normRequirement(v)
				if used[i] || nv == "" || nr == "" {
					continue
				}
				if nv == nr || pass == 1 && (strings.Contains(nr, nv) || strings.Contains(nv, nr)) {
					found = i
					break
				}
			}
		}
		if found < 0 {
			missing = append(missing, r)
			continue
		}
		used[found] = true
	}
	return missing
}
