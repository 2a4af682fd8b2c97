//! What can be wrong with the TLS files, each error naming the file an operator has to fix.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{path}: no such file")]
    Missing { path: PathBuf },
    #[error("{path}: cannot be read: {source}")]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not valid PEM: {reason}")]
    NotPem { path: PathBuf, reason: String },
    #[error("{path}: no certificate in it (a PEM `CERTIFICATE` block is expected)")]
    NoCertificate { path: PathBuf },
    #[error("{path}: the certificate cannot be parsed: {reason}")]
    BadCertificate { path: PathBuf, reason: String },
    #[error("{path}: no private key in it (PKCS#8, PKCS#1 or SEC1 PEM is expected)")]
    NoPrivateKey { path: PathBuf },
    #[error("{path}: the private key cannot be used: {reason}")]
    UnusableKey { path: PathBuf, reason: String },
    #[error("{key}: the private key does not match the certificate in {certificate}")]
    KeyMismatch { key: PathBuf, certificate: PathBuf },
    #[error("{path}: bad client CA bundle: {reason}")]
    BadClientCa { path: PathBuf, reason: String },
    #[error("{path}: no certificate revocation list in it (a PEM `X509 CRL` block is expected)")]
    NoCrl { path: PathBuf },
    #[error("{path}: bad certificate revocation list: {reason}")]
    BadCrl { path: PathBuf, reason: String },
    /// Not caused by a file: the crypto provider refused something (e.g. no randomness for the
    /// session-ticket keys).
    #[error("TLS set-up failed: {0}")]
    Setup(#[source] rustls::Error),
    /// A verified client certificate that x509-parser still cannot read: the gateway should
    /// treat the charger as unidentified.
    #[error("the client certificate cannot be read: {reason}")]
    UnreadableClientCertificate { reason: String },
    /// A resumed session's client certificate that the client CA and CRLs in force now refuse
    /// (the CA was removed, the certificate revoked or expired since the session began).
    #[error("the resumed session's client certificate is no longer accepted: {0}")]
    ClientCertificateRefused(#[source] rustls::Error),
}
