//! The abuse suite: what a stranger, a narrow token or a broken charger can try, one case per
//! hole found by review, each against a real `cms up`. A new feature adds its own cases here.

mod access_cache;
mod chargers;
mod claims;
mod gateway;
mod http;
mod oauth;
mod ops;
mod records;
mod secrets;
mod streams;
mod tokens;
