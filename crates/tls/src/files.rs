//! The PEM files a TLS listener is configured with, read with errors that name the file.

use std::path::{Path, PathBuf};

use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer};

use crate::TlsError;

/// Where a listener's certificate, key and (for OCPP security profile 3) client CA live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The server certificate first, then the intermediates clients need to reach their root.
    pub certificate_chain: PathBuf,
    /// The certificate's private key: PKCS#8, PKCS#1 (RSA) or SEC1 (EC) PEM.
    pub private_key: PathBuf,
    /// The CAs whose client certificates are accepted; `None` asks no client for one.
    pub client_ca: Option<PathBuf>,
    /// Certificate revocation lists (PEM) of those CAs; only with `client_ca`.
    pub client_crl: Option<PathBuf>,
}

impl TlsFiles {
    pub fn new(certificate_chain: impl Into<PathBuf>, private_key: impl Into<PathBuf>) -> Self {
        TlsFiles {
            certificate_chain: certificate_chain.into(),
            private_key: private_key.into(),
            client_ca: None,
            client_crl: None,
        }
    }

    pub fn with_client_ca(mut self, client_ca: impl Into<PathBuf>) -> Self {
        self.client_ca = Some(client_ca.into());
        self
    }

    /// Revocation lists that apply to the client CA's certificates (`with_client_ca`).
    pub fn with_client_crl(mut self, client_crl: impl Into<PathBuf>) -> Self {
        self.client_crl = Some(client_crl.into());
        self
    }

    /// Every configured file, the ones `watch` looks at.
    pub(crate) fn paths(&self) -> impl Iterator<Item = &Path> {
        [
            Some(&self.certificate_chain),
            Some(&self.private_key),
            self.client_ca.as_ref(),
            self.client_crl.as_ref(),
        ]
        .into_iter()
        .flatten()
        .map(PathBuf::as_path)
    }
}

/// Every `CERTIFICATE` block of a PEM file, in file order; at least one.
pub(crate) fn read_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let text = read(path)?;
    let certificates = CertificateDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| not_pem(path, error))?;
    if certificates.is_empty() {
        return Err(TlsError::NoCertificate {
            path: path.to_owned(),
        });
    }
    Ok(certificates)
}

/// Every `X509 CRL` block of a PEM file, in file order; at least one.
pub(crate) fn read_crls(
    path: &Path,
) -> Result<Vec<CertificateRevocationListDer<'static>>, TlsError> {
    let text = read(path)?;
    let crls = CertificateRevocationListDer::pem_slice_iter(&text)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| not_pem(path, error))?;
    if crls.is_empty() {
        return Err(TlsError::NoCrl {
            path: path.to_owned(),
        });
    }
    Ok(crls)
}

/// The first private key of a PEM file, whichever of the three encodings it is in.
pub(crate) fn read_private_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    let text = read(path)?;
    PrivateKeyDer::from_pem_slice(&text).map_err(|error| match error {
        pem::Error::NoItemsFound => TlsError::NoPrivateKey {
            path: path.to_owned(),
        },
        error => not_pem(path, error),
    })
}

fn read(path: &Path) -> Result<Vec<u8>, TlsError> {
    std::fs::read(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => TlsError::Missing {
            path: path.to_owned(),
        },
        _ => TlsError::Unreadable {
            path: path.to_owned(),
            source,
        },
    })
}

fn not_pem(path: &Path, error: pem::Error) -> TlsError {
    // The parser reports markers as raw bytes; an operator reads text.
    let reason = match error {
        pem::Error::MissingSectionEnd { end_marker } => {
            format!(
                "a {} block has no END line",
                String::from_utf8_lossy(&end_marker)
            )
        }
        pem::Error::IllegalSectionStart { line } => {
            format!("malformed line {:?}", String::from_utf8_lossy(&line))
        }
        error => error.to_string(),
    };
    TlsError::NotPem {
        path: path.to_owned(),
        reason,
    }
}
