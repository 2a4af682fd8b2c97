//! Teams' subscriptions: where their events go, which events, signed with what.
