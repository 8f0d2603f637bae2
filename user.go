package coachd

import (
	"context"
	"time"
)

// User is an API caller: an end user of a coach app.
type User struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	TokenBudget int64  `json:"token_budget"` // 0 means no budget: every turn needs a free preview
	TokensUsed  int64  `json:"tokens_used"`
	// RateLimit overrides the server's request rate ("20/60s", "off"); "" is the default.
	RateLimit string `json:"rate_limit,omitempty"`
	// MonthlyMessages overrides the server's monthly message limit (0: none); nil is the default.
	MonthlyMessages *int64 `json:"monthly_messages,omitempty"`
	// ExternalID is "iss|sub" for a user an identity provider's JWT
	// authenticates; "" for key-only users.
	ExternalID string `json:"external_id,omitempty"`
	// Revoked: an admin revoked the user's access (DELETE
	// /v1/users/{id}/key) and no rotation followed: no key works, nor,
	// for an ExternalID user, the identity provider's tokens.
	Revoked bool `json:"revoked,omitempty"`
	// LiveNotes is how many notes the user had, not deleted, when the
	// row was read (a tool's first check against MaxNotesPerUser; the
	// store's write is the one that holds).
	LiveNotes int64     `json:"-"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// RevokedKeyPrefix begins the key hash a revocation stores (the hash of
// no key, as a hex SHA-256 never begins so): User.Revoked.
const RevokedKeyPrefix = "revoked-"

// UserUpdate lists the fields an admin may change; nil leaves a field alone.
type UserUpdate struct {
	Name        *string
	TokenBudget *int64
	// RateLimit: "" resets to the server default. MonthlyMessages: -1 resets.
	RateLimit       *string
	MonthlyMessages *int64
}

// UserService stores users and authenticates API keys.
type UserService interface {
	// CreateUser stores u with the SHA-256 hash of its API key (hex).
	CreateUser(ctx context.Context, u *User, keyHash string) error
	FindUserByID(ctx context.Context, id string) (*User, error)
	// FindUserByKeyHash returns the user whose key hashes to keyHash, or ENOTFOUND.
	FindUserByKeyHash(ctx context.Context, keyHash string) (*User, error)
	// FindUserByExternalID returns the user an identity provider's subject
	// maps to, or ENOTFOUND.
	FindUserByExternalID(ctx context.Context, externalID string) (*User, error)
	ListUsers(ctx context.Context, page Page) ([]*User, string, error)
	UpdateUser(ctx context.Context, id string, upd UserUpdate) (*User, error)
	// SetUserKey replaces the hash of the user's API key.
	SetUserKey(ctx context.Context, id, keyHash string) error
	// DeleteUser removes the user and all of their data.
	DeleteUser(ctx context.Context, id string) error
}
