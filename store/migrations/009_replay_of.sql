-- Replays (issue 14). replay_of is, on a request re-sent from the history (app.History.Replay:
-- uncompacted, on another account or model), the id of the exchange it re-sent; '' on every
-- other row. Indexed so an exchange's detail lists its replays.
ALTER TABLE exchanges ADD COLUMN replay_of TEXT NOT NULL DEFAULT '';
CREATE INDEX exchanges_replay_of ON exchanges (replay_of) WHERE replay_of != '';
