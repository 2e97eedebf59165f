-- A finished exchange's attempts in its own row, as JSON (store/history.go, attemptsColumn):
-- a row per attempt cost the history writer a fifth of a small exchange's time, and a
-- request has one attempt but when an account failed. Rows written before this migration
-- keep '' here and their attempts in exchange_attempts, where the reader still finds them.
ALTER TABLE exchanges ADD COLUMN attempts TEXT NOT NULL DEFAULT '';
