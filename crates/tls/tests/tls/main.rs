//! cms-tls against real rustls clients over loopback TCP: handshakes, client certificates,
//! resumption, reloads, and the errors an operator reads.

mod client_auth;
mod files;
mod handshake;
mod reload;
mod resumption;
mod support;
mod watch;
