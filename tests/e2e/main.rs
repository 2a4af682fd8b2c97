//! End-to-end tests of `cms`: real chargers over websockets, the REST API, the admin commands
//! and the process lifecycle, each test against its own `cms up`.

mod support;

mod abuse;
mod actions;
mod admin_commands;
mod api_chargers;
mod api_id_tags;
mod api_isolation;
mod api_meters;
mod api_openapi;
mod api_robustness;
mod api_site_teams;
mod api_sites;
mod api_smart_charging;
mod api_teams;
mod api_tokens;
mod api_transactions;
mod authorization;
mod bad_frames;
mod charger_auth;
mod charger_state;
mod connections;
mod deploy_k8s;
mod gateway_drain;
mod http_metrics;
mod interop;
mod kafka_actions;
mod kafka_faults;
mod kafka_fleet;
mod kafka_smart_charging;
mod keepalive;
mod lifecycle;
mod local_lists;
mod meter_values;
mod metrics;
mod oauth;
mod ocpp_answers;
mod postgres_tls;
mod proxy;
mod proxy_harness;
mod rest_api;
mod smart_charging;
mod tls;
mod tls_proxy;
mod transactions;
