-- Watch reloads the running app when settings or accounts change, whoever changed them (the CLI is
-- another process). It reads this counter rather than PRAGMA data_version, which every commit
-- bumps: the request history commits several times a second.
CREATE TABLE config_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO config_version (id, version) VALUES (1, 0);

CREATE TRIGGER settings_inserted AFTER INSERT ON settings BEGIN UPDATE config_version SET version = version + 1; END;
CREATE TRIGGER settings_updated AFTER UPDATE ON settings BEGIN UPDATE config_version SET version = version + 1; END;
CREATE TRIGGER settings_deleted AFTER DELETE ON settings BEGIN UPDATE config_version SET version = version + 1; END;
CREATE TRIGGER accounts_inserted AFTER INSERT ON accounts BEGIN UPDATE config_version SET version = version + 1; END;
CREATE TRIGGER accounts_updated AFTER UPDATE ON accounts BEGIN UPDATE config_version SET version = version + 1; END;
CREATE TRIGGER accounts_deleted AFTER DELETE ON accounts BEGIN UPDATE config_version SET version = version + 1; END;
