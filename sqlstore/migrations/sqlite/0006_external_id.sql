-- Users an app's identity provider vouches for (JWT bearer tokens): the
-- token's issuer and subject, "iss|sub"; NULL for key-only users.
ALTER TABLE users ADD COLUMN external_id TEXT;
CREATE UNIQUE INDEX users_external ON users (external_id) WHERE external_id IS NOT NULL;
