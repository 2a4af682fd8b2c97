//! One rustls `ServerConfig` from the files: TLS 1.2 and 1.3, optional client certificates,
//! ALPN `http/1.1`, and resumption state that outlives any one configuration.

use std::path::Path;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use rustls::crypto::CryptoProvider;
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{ProducesTickets, ServerSessionMemoryCache, WebPkiClientVerifier};
use rustls::sign::{CertifiedKey, SingleCertAndKey};
use rustls::{InconsistentKeys, RootCertStore, ServerConfig};

use crate::TlsError;
use crate::certificate::not_after;
use crate::files::{TlsFiles, read_certificates, read_private_key};

/// Sessions remembered for TLS 1.2 clients that resume by session id. A gateway process holds
/// fewer than 20,000 chargers (the open-file limit), so this covers a reconnect storm of all
/// of them several times over; an entry is a few hundred bytes.
const SESSION_CACHE_ENTRIES: usize = 64 * 1024;

/// Resumption state made once per listener and handed to every configuration it loads, so a
/// charger that reconnects after a certificate rotation still resumes instead of paying for a
/// full handshake.
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

pub(crate) fn build(
    files: &TlsFiles,
    provider: &Arc<CryptoProvider>,
    resumption: &Resumption,
) -> Result<Loaded, TlsError> {
    let certified = certified_key(files, provider)?;
    let not_after = chain_not_after(&certified.cert, &files.certificate_chain)?;
    let verifier = match &files.client_ca {
        Some(path) => client_verifier(path, provider)?,
        None => WebPkiClientVerifier::no_client_auth(),
    };
    let mut config = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(TlsError::Setup)?
        .with_client_cert_verifier(verifier)
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

/// Client certificates are asked for but optional: profile-2 chargers (Basic auth) and
/// profile-3 chargers (certificate) share one port, and the gateway decides per charger. A
/// certificate that is presented must chain to the bundle and be within its validity.
pub(crate) fn client_verifier(
    path: &Path,
    provider: &Arc<CryptoProvider>,
) -> Result<Arc<dyn ClientCertVerifier>, TlsError> {
    let bad = |reason: String| TlsError::BadClientCa {
        path: path.to_owned(),
        reason,
    };
    let mut roots = RootCertStore::empty();
    for certificate in read_certificates(path)? {
        roots
            .add(certificate)
            .map_err(|error| bad(error.to_string()))?;
    }
    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .allow_unauthenticated()
        .build()
        .map_err(|error| bad(error.to_string()))
}
