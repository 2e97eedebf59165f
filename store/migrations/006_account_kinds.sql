-- Account kinds are the protocols the proxy speaks upstream (proxy/pool/account.go): the kind
-- once reserved as "openai-compatible" is "openai" (Chat Completions at the base URL).
UPDATE accounts SET kind = 'openai' WHERE kind = 'openai-compatible';

-- The wire format the client spoke (anthropic, openai-chat, openai-responses, gemini) and the
-- one the last attempt sent upstream (the account's kind), per exchange. Rows recorded before
-- keep '' rather than being rewritten: adding a column with a constant default is instant,
-- an UPDATE of a long history is not, and the UI shows '' as unknown.
ALTER TABLE exchanges ADD COLUMN client_protocol TEXT NOT NULL DEFAULT '';
ALTER TABLE exchanges ADD COLUMN upstream_protocol TEXT NOT NULL DEFAULT '';
