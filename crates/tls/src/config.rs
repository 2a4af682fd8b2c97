//! One rustls `ServerConfig` from the files: TLS 1.2 and 1.3, optional client certificates,
//! ALPN `http/1.1`, and resumption state that outlives any one configuration as long as the
//! client CA and CRLs stay as they were.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rustls::crypto::CryptoProvider;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{ProducesTickets, ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::{InconsistentKeys, ServerConfig};

use crate::TlsError;
use crate::certificate::not_after;
use crate::client_trust::{ClientTrust, client_verifier};
use crate::files::{TlsFiles, read_certificates, read_private_key};

/// Sessions remembered for TLS 1.2 clients that resume by session id. A gateway process holds
/// fewer than 20,000 chargers (the open-file limit), so this covers a reconnect storm of all
/// of them several times over; an entry is a few hundred bytes.
const SESSION_CACHE_ENTRIES: usize = 64 * 1024;

/// Resumption state handed from each configuration to the next, so a charger that reconnects
/// after a rotation of the server's certificate still resumes instead of paying for a full
/// handshake. A change of the client CA or CRLs starts it anew: a session resumes without its
/// certificate being verified, and one verified under the old trust should not.
#[derive(Clone)]
pub(crate) struct Resumption {
    sessions: Arc<ServerSessionMemoryCache>,
    tickets: Arc<dyn ProducesTickets>,
}

impl Resumption {
    pub(crate) fn new() -> Result<Self, TlsError> {
        Ok(Resumption {
            sessions: ServerSessionMemoryCache::new(SESSION_CACHE_ENTRIES),
            tickets: rustls::crypto::ring::Ticketer::new().map_err(TlsError::Setup)?,
        })
    }
}

/// A configuration ready to accept with, and when its certificate chain stops being valid.
pub(crate) struct Loaded {
    pub(crate) config: Arc<ServerConfig>,
    pub(crate) not_after: DateTime<Utc>,
    /// The handshake's verifier of client certificates, asked again when a session resumes.
    pub(crate) verifier: Arc<dyn ClientCertVerifier>,
    /// What that verifier trusts; `None` without a client CA.
    client_trust: Option<ClientTrust>,
    resumption: Resumption,
}

/// ring's provider, AES-128-GCM first: with the server's order in force, chargers get the
/// cheapest of the suites they offer (measured on a full handshake: 110 µs of the handshake
/// thread instead of 120-127 µs with AES-256-GCM, which most clients ask for first).
pub(crate) fn provider() -> CryptoProvider {
    use rustls::CipherSuite::{
        TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        TLS13_AES_128_GCM_SHA256,
    };
    let mut provider = rustls::crypto::ring::default_provider();
    // A stable sort: the rest keep ring's order.
    provider.cipher_suites.sort_by_key(|suite| {
        !matches!(
            suite.suite(),
            TLS13_AES_128_GCM_SHA256
                | TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
                | TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
        )
    });
    provider
}

/// A configuration from the files, resuming the sessions of `previous` when the client CA and
/// CRLs are as they were.
pub(crate) fn build(
    files: &TlsFiles,
    provider: &Arc<CryptoProvider>,
    previous: Option<&Loaded>,
) -> Result<Loaded, TlsError> {
    let certified = certified_key(files, provider)?;
    let not_after = chain_not_after(&certified.cert, &files.certificate_chain)?;
    let (verifier, client_trust) = match &files.client_ca {
        Some(ca) => {
            let (verifier, trust) = client_verifier(ca, files.client_crl.as_deref(), provider)?;
            (verifier, Some(trust))
        }
        None => (WebPkiClientVerifier::no_client_auth(), None),
    };
    let resumption = match previous {
        Some(previous) if previous.client_trust == client_trust => previous.resumption.clone(),
        _ => Resumption::new()?,
    };
    let mut config = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(TlsError::Setup)?
        .with_client_cert_verifier(verifier.clone())
        .with_cert_resolver(Arc::new(SingleCertAndKey::from(certified)));
    // Websocket upgrades are HTTP/1.1. A client that offers no ALPN is served all the same;
    // one that offers only other protocols is refused, as RFC 7301 has it.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // The server's order of cipher suites (`provider`'s), not the client's.
    config.ignore_client_order = true;
    config.session_storage = resumption.sessions.clone();
    config.ticketer = resumption.tickets.clone();
    Ok(Loaded {
        config: Arc::new(config),
        not_after,
        verifier,
        client_trust,
        resumption,
    })
}

fn certified_key(files: &TlsFiles, provider: &CryptoProvider) -> Result<CertifiedKey, TlsError> {
    let chain = read_certificates(&files.certificate_chain)?;
    let key = read_private_key(&files.private_key)?;
    let signing_key = provider
        .key_provider
        .load_private_key(key)
        .map_err(|error| TlsError::UnusableKey {
            path: files.private_key.clone(),
            reason: error.to_string(),
        })?;
    let certified = CertifiedKey::new(chain, signing_key);
    match certified.keys_match() {
        // Unknown: the key cannot tell its public half; the handshake will sign with it anyway.
        Ok(()) | Err(rustls::Error::InconsistentKeys(InconsistentKeys::Unknown)) => Ok(certified),
        Err(rustls::Error::InconsistentKeys(InconsistentKeys::KeyMismatch)) => {
            Err(TlsError::KeyMismatch {
                key: files.private_key.clone(),
                certificate: files.certificate_chain.clone(),
            })
        }
        Err(error) => Err(TlsError::BadCertificate {
            path: files.certificate_chain.clone(),
            reason: error.to_string(),
        }),
    }
}

/// The earliest notAfter of the served chain: clients refuse it once any link has expired.
fn chain_not_after(
    chain: &[rustls::pki_types::CertificateDer<'_>],
    path: &Path,
) -> Result<DateTime<Utc>, TlsError> {
    let mut earliest = DateTime::<Utc>::MAX_UTC;
    for der in chain {
        let not_after = not_after(der).map_err(|reason| TlsError::BadCertificate {
            path: path.to_owned(),
            reason,
        })?;
        earliest = earliest.min(not_after);
    }
    Ok(earliest)
}
