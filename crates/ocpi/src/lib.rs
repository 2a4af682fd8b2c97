//! OCPI 2.2.1 (docs/ocpi.md) as cms speaks it in the CPO role: the pieces every module shares
//! (the response envelope and its status codes, the `Authorization: Token` header, pagination,
//! timestamps) and each module's objects. Protocol only: no store, no HTTP server or client.
#![forbid(unsafe_code)]

pub mod envelope;
pub mod page;
pub mod status;
pub mod time;
pub mod token_header;

pub mod cdrs;
pub mod commands;
pub mod credentials;
pub mod locations;
pub mod sessions;
pub mod tariffs;
pub mod tokens;
pub mod versions;

/// The one version cms speaks.
pub const VERSION: &str = "2.2.1";
