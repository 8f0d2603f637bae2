package sqlstore

import (
	"context"

	"github.com/coachd/coachd"
)

const voiceColumns = `id, user_id, session_id, agent, model, voice, expires_at, created_at`

func scanVoiceSession(row interface{ Scan(...any) error }) (*coachd.VoiceSession, error) {
	v := &coachd.VoiceSession{}
	var sessionID *string
	if err := row.Scan(&v.ID, &v.UserID, &sessionID, &v.Agent, &v.Model, &v.Voice,
		timeCol{&v.ExpiresAt}, timeCol{&v.CreatedAt}); err != nil {
		return nil, err
	}
	if sessionID != nil {
		v.SessionID = *sessionID
	}
	return v, nil
}

// CreateVoiceSession records a minted voice secret for its user. A
// SessionID must name one of the user's sessions.
func (db *DB) CreateVoiceSession(ctx context.Context, v *coachd.VoiceSession) error {
	if v.Agent == "" || v.Model == "" || v.Voice == "" || len(v.Agent)+len(v.Model)+len(v.Voice) > 600 {
		return coachd.Errorf(coachd.EINVALID, "voice session: agent, model and voice are required (at most 200 characters each)")
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := db.findUser(ctx, tx, v.UserID); err != nil {
		return err
	}
	var sessionID any
	if v.SessionID != "" {
		if _, err := findSession(ctx, tx, v.UserID, v.SessionID); err != nil {
			return err
		}
		sessionID = v.SessionID
	}
	v.ID, v.CreatedAt = coachd.NewID(coachd.PrefixVoice, tx.now), tx.now
	v.ExpiresAt = storeTime(v.ExpiresAt)
	if _, err := tx.exec(ctx, `INSERT INTO voice_sessions (`+voiceColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		v.ID, v.UserID, sessionID, v.Agent, v.Model, v.Voice, tx.time(v.ExpiresAt), tx.time(v.CreatedAt)); err != nil {
		return dbError(err, "create voice session")
	}
	return tx.commit()
}

// ListVoiceSessions returns the user's voice sessions, newest first.
func (db *DB) ListVoiceSessions(ctx context.Context, userID string, page coachd.Page) ([]*coachd.VoiceSession, string, error) {
	return listNewestFirst(ctx, db, "list voice sessions", "voice_sessions", voiceColumns, coachd.PrefixVoice, scanVoiceSession,
		func(v *coachd.VoiceSession) timeIDCursor { return timeIDCursor{v.CreatedAt.UnixMicro(), v.ID} }, userID, page)
}
