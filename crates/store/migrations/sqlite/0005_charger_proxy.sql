-- The proxy role the operator gives a charger (the vendor's ROLE_LEADER, ROLE_FOLLOWER or
-- ROLE_STANDALONE), and the servers it relays to or from, in the order the operator listed them.
ALTER TABLE chargers ADD COLUMN vendor_role TEXT;

CREATE TABLE proxy_servers (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    charger_id    INTEGER NOT NULL REFERENCES chargers(id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    websocket_url TEXT NOT NULL,
    role          TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    UNIQUE (charger_id, websocket_url)
);
