//! The `cms` command's parts: `cms up` wiring and the admin commands, as a library so the
//! end-to-end suite and the binary share them.
// Two calls into the C library are the only unsafe code, each allowed where it is: the
// allocator's trim (observability/heap.rs) and the shards' scheduling policy (priority.rs).
#![deny(unsafe_code)]

pub mod action_args;
pub mod action_cli;
pub mod admin;
pub mod api;
pub mod counts;
pub mod dead_letters;
pub mod diagnostics;
pub mod duration;
pub mod gateway;
pub mod id_tag_cli;
pub mod kafka;
pub mod oauth_cli;
pub mod observability;
pub mod ocpi_args;
pub mod ops_args;
pub mod paging;
pub mod priority;
pub mod quota_args;
pub mod registry_feed;
pub mod shutdown;
pub mod station_ca_args;
pub mod store_args;
pub mod tls_args;
pub mod up;
pub mod webhook_args;
