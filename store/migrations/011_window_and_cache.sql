-- Issue 15: where the context window of each request came from ("setting", "default", "beta",
-- "learned"), the client headers a replay must send again (an allow-list: anthropic-beta,
-- anthropic-version, openai-beta, as a JSON object; never a credential), and per compaction
-- step the prompt-cache re-write it caused or why it waited for the cache instead.
ALTER TABLE exchanges ADD COLUMN context_limit_source TEXT NOT NULL DEFAULT '';
ALTER TABLE exchanges ADD COLUMN client_headers TEXT NOT NULL DEFAULT '';
ALTER TABLE exchange_compaction ADD COLUMN rewrite INTEGER NOT NULL DEFAULT 0;
ALTER TABLE exchange_compaction ADD COLUMN deferred TEXT NOT NULL DEFAULT '';
