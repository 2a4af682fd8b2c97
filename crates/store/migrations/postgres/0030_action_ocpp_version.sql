-- The OCPP version an action was taken for (`1.6` or `2.0.1`, as `chargers.ocpp_version` names
-- it), so that one published later (the command line's outbox) or reported is the call of that
-- version: `Reset` is a call of both. Every action before was a 1.6 one.
ALTER TABLE charger_actions ADD COLUMN ocpp_version TEXT NOT NULL DEFAULT '1.6';
