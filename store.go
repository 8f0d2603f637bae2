package coachd

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"strings"
	"time"
)

// Store is every service the database provides. sqlstore implements it over
// SQLite and PostgreSQL.
type Store interface {
	UserService
	SessionService
	MessageService
	NoteService
	FileService
	BudgetService
	LimitService
	ReviewService
	VoiceService
	StreamService
	FingerprintService
	UploadService
	TurnService
}

// Clock tells the time; tests inject a fake one.
type Clock interface{ Now() time.Time }

// SystemClock is the real clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns a prefixed, time-ordered ID like "sess_01h...": 48 bits of
// milliseconds then 80 random bits, Crockford base32, lowercase.
func NewID(prefix string, now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	rand.Read(b[6:])
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// ValidID reports whether id has the given prefix and the shape NewID makes,
// so that nothing else reaches a query.
func ValidID(prefix, id string) bool {
	rest, ok := strings.CutPrefix(id, prefix+"_")
	if !ok || len(rest) != 26 {
		return false
	}
	for _, c := range rest {
		if !strings.ContainsRune("0123456789abcdefghjkmnpqrstvwxyz", c) {
			return false
		}
	}
	return true
}

// ID prefixes.
const (
	PrefixUser    = "usr"
	PrefixSession = "sess"
	PrefixMessage = "msg"
	PrefixNote    = "note"
)
