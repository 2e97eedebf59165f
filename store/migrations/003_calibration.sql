-- What real usage taught the token estimator: one smoothed factor (real tokens / raw estimate)
-- per model family, kept across restarts so a fresh start does not estimate blind.
CREATE TABLE calibration (
    family     TEXT PRIMARY KEY,
    factor     REAL NOT NULL,
    updated_at TEXT NOT NULL
);
