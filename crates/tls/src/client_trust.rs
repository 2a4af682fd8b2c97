//! Which client certificates are believed: those that chain to a CA of `--tls-client-ca`, are
//! valid now, and that no CRL of `--tls-client-crl` revokes. Asked in the handshake, again when
//! a session resumes, and of certificates that a trusted proxy forwards.

use std::path::Path;
use std::sync::Arc;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, UnixTime};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::{VerifierBuilderError, WebPkiClientVerifier};

use crate::TlsError;
use crate::files::{read_certificates, read_crls};

/// What the verifier was made of, to tell whether a reload changed it.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ClientTrust {
    cas: Vec<CertificateDer<'static>>,
    crls: Vec<CertificateRevocationListDer<'static>>,
}

/// A verifier of the CAs in `ca` and the CRLs in `crl`, with what it was made of.
///
/// Certificates are asked for but optional: profile-2 chargers (Basic auth) and profile-3
/// chargers (certificate) share one port, and the gateway decides per charger. With CRLs, every
/// certificate of the chain below the root needs a CRL of its issuer in the file (rustls's
/// default, as nginx's `ssl_crl`): a certificate whose status is unknown is refused. A CRL past
/// its nextUpdate still applies.
pub(crate) fn client_verifier(
    ca: &Path,
    crl: Option<&Path>,
    provider: &Arc<CryptoProvider>,
) -> Result<(Arc<dyn ClientCertVerifier>, ClientTrust), TlsError> {
    let bad_ca = |reason: String| TlsError::BadClientCa {
        path: ca.to_owned(),
        reason,
    };
    let cas = read_certificates(ca)?;
    let crls = match crl {
        Some(path) => read_crls(path)?,
        None => Vec::new(),
    };
    let mut roots = RootCertStore::empty();
    for certificate in &cas {
        roots
            .add(certificate.clone())
            .map_err(|error| bad_ca(error.to_string()))?;
    }
    let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .with_crls(crls.iter().cloned())
        .allow_unauthenticated()
        .build()
        .map_err(|error| match (error, crl) {
            (VerifierBuilderError::InvalidCrl(reason), Some(path)) => TlsError::BadCrl {
                path: path.to_owned(),
                reason: format!("{reason:?}"),
            },
            (error, _) => bad_ca(error.to_string()),
        })?;
    Ok((verifier, ClientTrust { cas, crls }))
}

/// Verifies a client's chain (its certificate first) as the handshake would, at this moment.
pub(crate) fn verify_chain(
    verifier: &dyn ClientCertVerifier,
    chain: &[CertificateDer<'_>],
) -> Result<(), rustls::Error> {
    let (end_entity, intermediates) = chain
        .split_first()
        .ok_or(rustls::Error::NoCertificatesPresented)?;
    // A verifier that asks for no certificate cannot judge one (rustls's would panic).
    if !verifier.offer_client_auth() {
        return Err(rustls::Error::General(
            "no client CA to verify the certificate with".into(),
        ));
    }
    verifier
        .verify_client_cert(end_entity, intermediates, UnixTime::now())
        .map(drop)
}
