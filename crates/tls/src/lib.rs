//! Server-side TLS for cms, in one place: the OCPP gateway's `wss` listener (security profiles 2
//! and 3) and the REST API's HTTPS listener get their rustls configuration, the client's
//! certificate and certificate reloads from here.
//!
//! # Use
//!
//! One [`ServerTls`] per TLS listener: loaded at start-up (a bad file stops start-up with a
//! [`TlsError`] that names it), watched for the life of the process, and asked for an acceptor
//! for each accepted TCP connection, so that a reload reaches every new connection while
//! established ones keep the configuration they were accepted with.
//!
//! ```no_run
//! # async fn gateway(
//! #     listener: tokio::net::TcpListener,
//! #     shutdown: tokio_util::sync::CancellationToken,
//! # ) -> Result<(), Box<dyn std::error::Error>> {
//! use cms_tls::{DEFAULT_POLL_INTERVAL, ServerTls, TlsFiles};
//!
//! let files = TlsFiles::new("/etc/cms/ocpp.pem", "/etc/cms/ocpp.key")
//!     .with_client_ca("/etc/cms/chargers-ca.pem")
//!     .with_client_crl("/etc/cms/chargers-crl.pem");
//! let tls = ServerTls::load("ocpp", files)?;
//! tls.watch(DEFAULT_POLL_INTERVAL, shutdown.clone())?;
//! loop {
//!     let (tcp, _) = listener.accept().await?;
//!     let (tls, acceptor) = (tls.clone(), tls.acceptor());
//!     tokio::spawn(async move {
//!         // Under a deadline: a client that never finishes its handshake holds a socket.
//!         let Ok(stream) = acceptor.accept(tcp).await else { return };
//!         // Verified again if the session was resumed: refused once revoked or expired.
//!         let certificate = tls.client_certificate_of(&stream);
//!         // ... the websocket upgrade over `stream`, then per charger: security profile 3
//!         // needs `Ok(Some(c))` with `c.identifies(identity)`, profile 2 the Basic password.
//!     });
//! }
//! # }
//! ```
//!
//! - **Gateway**: one `ServerTls` (`"ocpp"`) for the `--ocpp-tls-addr` listener, built from
//!   `--tls-cert`, `--tls-key` and `--tls-client-ca`. With a client CA, every client is asked
//!   for a certificate but may send none: profile-2 and profile-3 chargers share the port and
//!   the gateway decides per charger after the handshake. A certificate that is sent must chain
//!   to the CA, be within its validity and not be revoked by a CRL of `--tls-client-crl`, or the
//!   handshake fails.
//! - **REST API**: the same with `TlsFiles::new(http_cert, http_key)` and no client CA, under
//!   the name `"http"`; serve hyper over the accepted stream.
//! - **Reload**: `kill -HUP`, or replace a file (watched every few seconds), or
//!   [`ServerTls::reload`]. A replacement that does not load leaves the old certificate in
//!   service. Session tickets and the session cache survive a rotation of the server's
//!   certificate, so chargers resume across it; they start anew when the client CA or CRLs
//!   change, and a resumed session's certificate is verified again
//!   ([`ServerTls::client_certificate`]). They are per process, so a charger that lands on
//!   another gateway process does a full handshake.
//! - **Metrics**: `cms_tls_reloads_total{listener,result}` and
//!   `cms_tls_certificate_expiry_timestamp_seconds{listener}` (the chain's earliest notAfter).
//! - **Tests**: the `test-util` feature adds `cms_tls::test_pki`, a throwaway CA with server
//!   and client certificates written as PEM files.
#![forbid(unsafe_code)]

mod certificate;
mod client;
mod client_trust;
mod config;
mod error;
mod files;
mod fingerprint;
mod forwarded;
mod metrics;
mod server_tls;
pub mod station_ca;
#[cfg(feature = "test-util")]
pub mod test_pki;
mod watch;

pub use certificate::ClientCertificate;
pub use client::client_config;
pub use error::TlsError;
pub use files::TlsFiles;
pub use forwarded::ForwardedCertificates;
pub use server_tls::ServerTls;
pub use watch::DEFAULT_POLL_INTERVAL;

/// The TLS crates of the types this crate hands out, so users name the same versions.
pub use tokio_rustls::{self, rustls};
