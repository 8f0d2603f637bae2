package sse

import (
	"encoding/json"

	"github.com/coachd/coachd"
)

// The sage dialect: unnamed data lines, one key each, closed by
// data: [DONE] (see Done).
//
//	text_delta                        → {"text"}
//	tool_call_started                 → {"toolCall":{"id","name"}}, none for
//	                                    show_options and show_pulse_check; the
//	                                    Writer sends a round's as its tools are
//	                                    about to run, none if it pauses or its
//	                                    message never completes (holdSage)
//	round_boundary                    → {"roundBoundary":true}
//	interaction_requested (show_options)     → {"showOptions":{"options","toolUseId"}}
//	interaction_requested (show_pulse_check) → {"showPulseCheck":{"context","toolUseId"}}
//	approval_required                 → {"roundBoundary":true}, {"text":"<reason>: <input>"}, then
//	                                    {"showOptions":{"options":["Approve","Deny"],"toolUseId","approval":{...}}}
//	                                    (a sage client shows the pills; the pick it sends back is the answer)
//	session_changed completed         → {"sessionCompleted":true}
//	session_changed mode_entered      → {"modeChange":mode}
//	session_changed arc_completed     → {"arcCompleted":mode} ({"arcCompleted":true} without a mode)
//	error                             → {"error":message}
//	turn_ended max_rounds             → {"roundBoundary":true}, no error: seed
//	                                    002's loop (MAX_TOOL_ITERATIONS) ends its
//	                                    last round so and just stops
//
// Dropped: turn_started, thinking_delta, tool_call_ready, tool_result (the
// sage spec removed toolResult: results stay in the server loop), usage,
// turn_ended (the stream's end is [DONE]), and interactions of any other
// tool, which a sage client has no UI for.

// Interactive tools a sage client renders.
const (
	toolShowOptions    = "show_options"
	toolShowPulseCheck = "show_pulse_check"
)

type sageText struct {
	Text string `json:"text"`
}

type sageToolCall struct {
	ToolCall coachdCall `json:"toolCall"`
}

type sageRoundBoundary struct {
	RoundBoundary bool `json:"roundBoundary"`
}

type sageOptions struct {
	ShowOptions struct {
		Options   json.RawMessage `json:"options"`
		ToolUseID string          `json:"toolUseId"`
	} `json:"showOptions"`
}

type sagePulseCheck struct {
	ShowPulseCheck struct {
		Context   json.RawMessage `json:"context"`
		ToolUseID string          `json:"toolUseId"`
	} `json:"showPulseCheck"`
}

// sageApproval offers a call waiting for approval as two options.
type sageApproval struct {
	ShowOptions struct {
		Options   []string `json:"options"`
		ToolUseID string   `json:"toolUseId"`
		Approval  approval `json:"approval"`
	} `json:"showOptions"`
}

type sageCompleted struct {
	SessionCompleted bool `json:"sessionCompleted"`
}

type sageModeChange struct {
	ModeChange string `json:"modeChange"`
}

type sageArcCompleted struct {
	ArcCompleted any `json:"arcCompleted"` // the arc's mode, or true
}

type sageError struct {
	Error string `json:"error"`
}

func encodeSage(dst []byte, ev coachd.Event) []byte {
	switch ev.Type {
	case coachd.EventTextDelta:
		return frame(dst, "", sageText{ev.Text})
	case coachd.EventToolCallStarted:
		if ev.ToolName == toolShowOptions || ev.ToolName == toolShowPulseCheck {
			// Seed 002's loop shows a split-conversation tool before its
			// toolCalls and breaks; its client would count the toolCall
			// into the shimmer that only a roundBoundary turns off.
			return dst
		}
		return frame(dst, "", sageToolCall{coachdCall{ev.ToolUseID, ev.ToolName}})
	case coachd.EventRoundBoundary:
		return frame(dst, "", sageRoundBoundary{true})
	case coachd.EventInteractionRequested:
		return encodeSageInteraction(dst, ev)
	case coachd.EventApprovalRequired:
		// The roundBoundary is the "\n\n" before the reason: the seed's
		// client appends it and resets its shimmer counter, which counted
		// the call's toolCall and which no later roundBoundary resets.
		a := approvalOf(ev)
		dst = frame(dst, "", sageRoundBoundary{true})
		dst = frame(dst, "", sageText{a.Reason + ": " + string(compactJSON(a.Input))})
		var v sageApproval
		v.ShowOptions.Options = []string{"Approve", "Deny"}
		v.ShowOptions.ToolUseID = ev.ToolUseID
		v.ShowOptions.Approval = a
		return frame(dst, "", v)
	case coachd.EventSessionChanged:
		switch ev.Change {
		case coachd.ChangeCompleted:
			return frame(dst, "", sageCompleted{true})
		case coachd.ChangeModeEntered:
			return frame(dst, "", sageModeChange{ev.Mode})
		case coachd.ChangeArcCompleted:
			if ev.Mode == "" {
				return frame(dst, "", sageArcCompleted{true})
			}
			return frame(dst, "", sageArcCompleted{ev.Mode})
		}
	case coachd.EventError:
		e := errorOf(ev)
		if e.Code == coachd.TurnMaxRounds {
			// The error abnormalStop gives a loop stopped at its round
			// limit. Seed 002's loop closes each tool round with a
			// roundBoundary, the last one too, and leaves "while
			// (iteration < MAX_TOOL_ITERATIONS)" without a word.
			return frame(dst, "", sageRoundBoundary{true})
		}
		return frame(dst, "", sageError{e.Message})
	}
	return dst
}

func encodeSageInteraction(dst []byte, ev coachd.Event) []byte {
	input := rawOr(ev.Input, "{}")
	switch ev.ToolName {
	case toolShowOptions:
		var in struct {
			Options json.RawMessage `json:"options"`
		}
		_ = json.Unmarshal(input, &in) // input is valid JSON; a non-object has no options
		var v sageOptions
		v.ShowOptions.Options = rawOr(in.Options, "[]")
		if string(v.ShowOptions.Options) == "null" {
			v.ShowOptions.Options = json.RawMessage("[]")
		}
		v.ShowOptions.ToolUseID = ev.ToolUseID
		return frame(dst, "", v)
	case toolShowPulseCheck:
		var v sagePulseCheck
		v.ShowPulseCheck.Context = input
		v.ShowPulseCheck.ToolUseID = ev.ToolUseID
		return frame(dst, "", v)
	}
	return dst
}
