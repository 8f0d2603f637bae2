package client

import (
	"bufio"
	"bytes"
	"io"
	"strings"
)

// MaxEventBytes bounds one SSE event's data.
const MaxEventBytes = 4 << 20

// Event is one server-sent event: its name ("" for unnamed events, which
// SSE calls "message"), its data and the last event id the stream set
// (coachd's turn:seq), which a reader resumes after.
type Event struct {
	Name string
	Data []byte
	ID   string
}

// EventReader reads server-sent events as the HTML standard defines them:
// lines ending in LF, CR or CRLF; "event:" and "data:" fields (one optional
// space after the colon); comments (":…", the server's heartbeats) and
// "id:" sets the last event id; other fields ignored; a blank line
// dispatches the event.
type EventReader struct {
	r    *bufio.Reader
	id   string
	name string
	data bytes.Buffer
	has  bool
}

// NewEventReader reads events from r.
func NewEventReader(r io.Reader) *EventReader {
	return &EventReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next event, or io.EOF at the end of the stream. An event
// cut off by the end of the stream is dropped, as the standard says.
func (er *EventReader) Next() (Event, error) {
	for {
		line, err := er.line()
		if err != nil {
			return Event{}, err
		}
		if line == "" {
			if !er.has {
				er.name = ""
				continue
			}
			ev := Event{Name: er.name, Data: bytes.Clone(er.data.Bytes()), ID: er.id}
			er.name, er.has = "", false
			er.data.Reset()
			return ev, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			er.name = value
		case "id":
			if !strings.ContainsRune(value, 0) {
				er.id = value
			}
		case "data":
			if er.has {
				er.data.WriteByte('\n')
			}
			if er.data.Len()+len(value) > MaxEventBytes {
				return Event{}, errEventTooLarge
			}
			er.data.WriteString(value)
			er.has = true
		}
	}
}

type sseError string

func (e sseError) Error() string { return string(e) }

const errEventTooLarge = sseError("client: server-sent event larger than 4 MiB")

// line reads one line without its terminator (LF, CR or CRLF).
func (er *EventReader) line() (string, error) {
	var sb strings.Builder
	for {
		b, err := er.r.ReadByte()
		if err != nil {
			return "", err
		}
		switch b {
		case '\n':
			return sb.String(), nil
		case '\r':
			if next, err := er.r.Peek(1); err == nil && next[0] == '\n' {
				er.r.ReadByte()
			}
			return sb.String(), nil
		}
		if sb.Len() >= MaxEventBytes {
			return "", errEventTooLarge
		}
		sb.WriteByte(b)
	}
}
