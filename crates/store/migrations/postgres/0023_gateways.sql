-- Each gateway's last sign of life (its `gateway_alive` beacons and its `gateway_started`), as
-- the gateway's own clock told it: the API's sweep ends the sessions of chargers still shown
-- online on a gateway silent past --gateway-timeout (docs/bus.md, docs/operations.md). Only
-- gateways that beacon have a row: one of an older version, which never does, is not judged.
CREATE TABLE gateways (
    node_id      TEXT PRIMARY KEY,
    last_seen_at TEXT NOT NULL
);

-- The chargers online on a gateway: what its start and the sweep look for, without reading
-- every charger.
CREATE INDEX chargers_online_by_server ON chargers (server) WHERE connection_status = 'online';

-- When the sweep ended a charger's session for its gateway's silence (the gateway's last sign
-- of life then), until that session is heard of again: a later beacon of the same gateway
-- shows the silence was cms not hearing it (a stalled partition, a consumer rebalance), and
-- brings the session back online; a disconnect, a connect or the gateway's restart forgets it.
ALTER TABLE chargers ADD COLUMN silenced_at TEXT;
-- The sessions a gateway's beacon may bring back: none, but in the rare while after a silence.
CREATE INDEX chargers_silenced_by_server ON chargers (server) WHERE silenced_at IS NOT NULL;
