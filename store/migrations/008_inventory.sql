-- The tool inventory and the Layer-3 summary calls (issue 14). parent_id links a request the
-- proxy made itself (a Layer-3 summary call, route 'summary') to the client request that
-- caused it; tools and tool_tokens are the tool definitions a request offered and about how
-- many tokens they take; tools_called is the JSON array of the tools its reply called, in
-- order ('[]' for none, '' on rows written before this migration).
ALTER TABLE exchanges ADD COLUMN parent_id TEXT NOT NULL DEFAULT '';
ALTER TABLE exchanges ADD COLUMN tools INTEGER NOT NULL DEFAULT 0;
ALTER TABLE exchanges ADD COLUMN tool_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE exchanges ADD COLUMN tools_called TEXT NOT NULL DEFAULT '';
CREATE INDEX exchanges_parent_id ON exchanges (parent_id) WHERE parent_id != '';
