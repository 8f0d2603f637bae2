-- Budgets in billed units (issue 14): ledger.used_delta and
-- reservations.charged count the budget's unit (tokens, tokens-equivalent
-- weighted as Claude bills them, or micro-USD; coachd --budget-unit);
-- raw_tokens and raw_charged keep the raw token counts they stand for.
-- Rows written before units existed were in tokens.
ALTER TABLE ledger ADD COLUMN raw_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ledger ADD COLUMN unit TEXT NOT NULL DEFAULT 'tokens';
ALTER TABLE reservations ADD COLUMN raw_charged BIGINT NOT NULL DEFAULT 0 CHECK (raw_charged >= 0);
UPDATE ledger SET raw_tokens = used_delta;
UPDATE reservations SET raw_charged = charged;
