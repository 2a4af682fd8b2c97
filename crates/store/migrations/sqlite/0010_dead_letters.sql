-- Bus records the store refused (a value no column can hold, a broken constraint), set aside
-- with the reason so that one bad record does not hold back every record behind it. Kept as
-- they came off the bus: the key and the value as bytes, the headers as a JSON object.
CREATE TABLE dead_letters (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    topic         TEXT NOT NULL,
    partition_id  INTEGER NOT NULL,
    record_offset INTEGER NOT NULL,
    record_key    BLOB NOT NULL,
    headers       TEXT NOT NULL,
    value         BLOB NOT NULL,
    reason        TEXT NOT NULL,
    created_at    TEXT NOT NULL
);
