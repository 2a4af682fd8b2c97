//! End-to-end tests of `cms`: real chargers over websockets, the REST API, the admin commands
//! and the process lifecycle, each test against its own `cms up`.

mod support;

mod admin_commands;
mod bad_frames;
mod charger_auth;
mod charger_state;
mod connections;
mod interop;
mod kafka_faults;
mod kafka_fleet;
mod keepalive;
mod lifecycle;
mod meter_values;
mod metrics;
mod ocpp_answers;
mod rest_api;
mod transactions;
