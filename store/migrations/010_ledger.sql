-- The ledger (issue 14): what each compaction step changed, as the JSON array of its edits
-- (store.Edit: message, block, kind, tokens, previews), redacted like every text field; ''
-- when the step recorded none, and on every row written before this migration.
ALTER TABLE exchange_compaction ADD COLUMN edits TEXT NOT NULL DEFAULT '';
