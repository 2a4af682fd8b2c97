//! The chargers' TLS client for a `wss://` target: rustls on ring (the versions cms serves with),
//! trusting the CA of `--tls-ca`. One `ClientConfig` for all chargers of a process, so that a
//! session ticket one charger was given can be resumed by the next connection; or, with
//! `--no-resumption`, none kept: every handshake is a full one.

use rustls::client::{
    ClientSessionStore, Resumption, Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::{ClientConfig, HandshakeKind, NamedGroup, RootCertStore};
use std::collections::{HashMap, VecDeque};
use std::net::Ipv4Addr;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

/// Everything a charger needs to open TLS to the target. Cheap to clone: the configuration,
/// with its session store, is shared.
#[derive(Clone)]
pub struct Tls {
    connector: TlsConnector,
    server_name: ServerName<'static>,
    /// The sessions to resume, shared with the configuration; `None`: no resumption.
    sessions: Option<Arc<TicketPool>>,
}

impl Tls {
    /// Trusts the certificates of the PEM file `ca` and expects the server to be `server_name`
    /// (a DNS name or an IP address, as in the certificate's subjectAltName); with
    /// `resumption`, keeps tickets for `chargers` chargers.
    pub fn new(
        ca: &Path,
        server_name: &str,
        resumption: bool,
        chargers: usize,
    ) -> Result<Self, String> {
        let roots = read_roots(ca)?;
        let server_name = ServerName::try_from(server_name.to_owned())
            .map_err(|e| format!("TLS server name {server_name:?}: {e}"))?;
        let sessions = resumption.then(|| Arc::new(TicketPool::for_chargers(chargers)));
        let config = client_config(roots, sessions.clone())
            .map_err(|e| format!("TLS client configuration: {e}"))?;
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            server_name,
            sessions,
        })
    }

    /// Whether sessions are kept to resume.
    pub fn resumes(&self) -> bool {
        self.sessions.is_some()
    }

    /// TLS 1.3 tickets held for the server now.
    #[cfg(test)]
    pub fn tickets(&self) -> usize {
        self.sessions
            .as_ref()
            .map_or(0, |pool| pool.tickets(&self.server_name))
    }

    /// The server name of a target given by address: the address itself, which the server's
    /// certificate must name (subjectAltName `IP:127.0.0.1`).
    pub fn ip_name(addr: Ipv4Addr) -> String {
        addr.to_string()
    }

    pub async fn connect(&self, tcp: TcpStream) -> std::io::Result<TlsStream<TcpStream>> {
        self.connector.connect(self.server_name.clone(), tcp).await
    }
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tls")
            .field("server_name", &self.server_name)
            .finish_non_exhaustive()
    }
}

/// TLS 1.3 and 1.2 as rustls offers them by default, ALPN `http/1.1` (what cms asks for), and
/// the sessions to resume, or none.
pub fn client_config(
    roots: RootCertStore,
    sessions: Option<Arc<TicketPool>>,
) -> Result<ClientConfig, rustls::Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config.resumption = match sessions {
        Some(pool) => Resumption::store(pool),
        None => Resumption::disabled(),
    };
    Ok(config)
}

/// The fleet's TLS sessions. rustls's own store keeps 8 TLS 1.3 tickets per server, fine for
/// one client but not for a fleet that reconnects at once: 32 chargers connecting together
/// found 8 tickets and made a full handshake for the rest, where real chargers each keep their
/// own. This one keeps up to two tickets per charger (cms sends two per connection), newest
/// used first, as rustls's does.
#[derive(Debug)]
pub struct TicketPool {
    tickets_per_server: usize,
    servers: Mutex<HashMap<ServerName<'static>, Remembered>>,
}

#[derive(Debug, Default)]
struct Remembered {
    kx_hint: Option<NamedGroup>,
    tls12: Option<Tls12ClientSessionValue>,
    tls13: VecDeque<Tls13ClientSessionValue>,
}

impl TicketPool {
    pub fn for_chargers(chargers: usize) -> Self {
        TicketPool {
            tickets_per_server: chargers.max(4) * 2,
            servers: Mutex::default(),
        }
    }

    fn edit<T>(&self, server: &ServerName<'_>, edit: impl FnOnce(&mut Remembered) -> T) -> T {
        let mut servers = self.servers.lock().unwrap_or_else(PoisonError::into_inner);
        let remembered = servers.entry(server.to_owned()).or_default();
        edit(remembered)
    }

    /// Tickets held for `server`.
    #[cfg(test)]
    pub fn tickets(&self, server: &ServerName<'_>) -> usize {
        self.edit(server, |r| r.tls13.len())
    }
}

impl ClientSessionStore for TicketPool {
    fn set_kx_hint(&self, server: ServerName<'static>, group: NamedGroup) {
        self.edit(&server, |r| r.kx_hint = Some(group));
    }

    fn kx_hint(&self, server: &ServerName<'_>) -> Option<NamedGroup> {
        self.edit(server, |r| r.kx_hint)
    }

    fn set_tls12_session(&self, server: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.edit(&server, |r| r.tls12 = Some(value));
    }

    fn tls12_session(&self, server: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.edit(server, |r| r.tls12.clone())
    }

    fn remove_tls12_session(&self, server: &ServerName<'static>) {
        self.edit(server, |r| r.tls12 = None);
    }

    fn insert_tls13_ticket(&self, server: ServerName<'static>, value: Tls13ClientSessionValue) {
        let most = self.tickets_per_server;
        self.edit(&server, |r| {
            if r.tls13.len() >= most {
                r.tls13.pop_front();
            }
            r.tls13.push_back(value);
        });
    }

    fn take_tls13_ticket(&self, server: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        self.edit(server, |r| r.tls13.pop_back())
    }
}

/// Whether an established TLS connection resumed an earlier session.
pub fn resumed(stream: &TlsStream<TcpStream>) -> bool {
    stream.get_ref().1.handshake_kind() == Some(HandshakeKind::Resumed)
}

/// What was negotiated, for the report: `TLSv1_3 TLS13_AES_256_GCM_SHA384 X25519`.
pub fn negotiated(stream: &TlsStream<TcpStream>) -> String {
    let c = stream.get_ref().1;
    let version = c.protocol_version().map(|v| format!("{v:?}"));
    let suite = c
        .negotiated_cipher_suite()
        .map(|s| format!("{:?}", s.suite()));
    let group = c
        .negotiated_key_exchange_group()
        .map(|g| format!("{:?}", g.name()));
    [version, suite, group]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every certificate of a PEM file, as trust anchors; at least one.
fn read_roots(path: &Path) -> Result<RootCertStore, String> {
    let what = |e: &dyn std::fmt::Display| format!("--tls-ca {}: {e}", path.display());
    let mut roots = RootCertStore::empty();
    for certificate in CertificateDer::pem_file_iter(path).map_err(|e| what(&e))? {
        roots
            .add(certificate.map_err(|e| what(&e))?)
            .map_err(|e| what(&e))?;
    }
    if roots.is_empty() {
        return Err(what(&"no CERTIFICATE in it"));
    }
    Ok(roots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ca_file_must_hold_a_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let pki = cms_tls::test_pki::TestPki::create(dir.path().join("pki"));
        assert!(Tls::new(&pki.ca_certificate(), "127.0.0.1", true, 1).is_ok());
        let missing = Tls::new(&dir.path().join("nope.pem"), "127.0.0.1", true, 1).unwrap_err();
        assert!(missing.contains("nope.pem"), "{missing}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = Tls::new(&empty, "127.0.0.1", true, 1).unwrap_err();
        assert!(err.contains("no CERTIFICATE"), "{err}");
        let bad_name = Tls::new(&pki.ca_certificate(), "not a name!", true, 1).unwrap_err();
        assert!(bad_name.contains("server name"), "{bad_name}");
    }

    /// Resumption itself is tested end to end in `handshakes`.
    #[test]
    fn the_chargers_offer_http_1_1() {
        let dir = tempfile::tempdir().unwrap();
        let pki = cms_tls::test_pki::TestPki::create(dir.path());
        let mut roots = RootCertStore::empty();
        for c in CertificateDer::pem_file_iter(pki.ca_certificate()).unwrap() {
            roots.add(c.unwrap()).unwrap();
        }
        let config = client_config(roots, None).unwrap();
        assert_eq!(config.alpn_protocols, [b"http/1.1".to_vec()]);
    }
}
