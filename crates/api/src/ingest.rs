//! The read model: records from the bus into the store and the latest-value cache (the
//! materialiser, and in the Kafka deployment every replica's latest follower), in the REST
//! form of a reading, with the gateways' liveness and the actions' reports.

pub(crate) mod action_reports;
pub(crate) mod arrived;
pub(crate) mod cache;
pub(crate) mod connection_attempts;
pub(crate) mod device_model;
pub(crate) mod fleet;
pub(crate) mod gateway_liveness;
pub(crate) mod heartbeat_overdue;
pub(crate) mod latest_follower;
pub(crate) mod materialiser;
pub(crate) mod normalise;
pub(crate) mod normalise_v201;
