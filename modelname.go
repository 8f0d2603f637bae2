package coachd

import "strings"

// modelAliases maps the short names agent files use (Claude Code's
// "model: sonnet") to the current model of each family. It is the one
// place to move when a family gets a new model.
var modelAliases = map[string]string{
	"sonnet": "claude-sonnet-5-5",
	"opus":   "claude-opus-5-5",
	"haiku":  "claude-haiku-5-5",
}

// knownModels are the Messages API model ids an agent may name, as the
// Anthropic SDK this build uses lists them. Ids past their end of life are
// left out, so a pack that names one is told at validation, not by a 404
// from the API at the first turn.
var knownModels = map[string]bool{
	"claude-haiku-5-5": true, "claude-sonnet-5-5": true, "claude-opus-5-5": true,
	"claude-fable-5-1": true, "claude-mythos-5-1": true,
	"claude-sonnet-5": true, "claude-fable-5": true, "claude-mythos-5": true, "claude-opus-5": true,
	"claude-opus-4-8": true, "claude-opus-4-7": true, "claude-opus-4-6": true,
	"claude-sonnet-4-6": true, "claude-haiku-4-5": true, "claude-haiku-4-5-20251001": true,
	"claude-opus-4-5": true, "claude-opus-4-5-20251101": true,
	"claude-sonnet-4-5": true, "claude-sonnet-4-5-20250929": true,
}

// ResolveModel turns an agent's model setting into a model id: an alias
// (sonnet, opus, haiku) becomes the family's current model, a known id is
// kept, and anything else is reported as unknown (ok false). Ids are
// compared case-insensitively, as people write them.
func ResolveModel(name string) (id string, ok bool) {
	n := strings.ToLower(strings.TrimSpace(name))
	if id, ok := modelAliases[n]; ok {
		return id, true
	}
	return n, knownModels[n]
}

// ModelAliases returns the alias table, for help texts and docs.
func ModelAliases() map[string]string {
	out := make(map[string]string, len(modelAliases))
	for k, v := range modelAliases {
		out[k] = v
	}
	return out
}
