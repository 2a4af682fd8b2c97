//! The verified client certificate of a connection, reduced to what the gateway decides on:
//! the subject's Common Name and Organization (OCPP security profile 3) and, for logs, when it
//! expires.

use chrono::{DateTime, Utc};
use rustls::pki_types::CertificateDer;
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

use crate::TlsError;

/// A client certificate that rustls has verified against the configured client CA (see
/// [`crate::ServerTls::client_certificate`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    common_names: Vec<String>,
    organizations: Vec<String>,
    not_after: DateTime<Utc>,
}

impl ClientCertificate {
    pub(crate) fn from_der(der: &CertificateDer<'_>) -> Result<Self, TlsError> {
        let unreadable = |reason: String| TlsError::UnreadableClientCertificate { reason };
        let certificate = parse(der).map_err(unreadable)?;
        let common_names = certificate
            .subject()
            .iter_common_name()
            .map(|name| name.as_str().map(str::to_owned))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|error| unreadable(format!("subject CN: {error}")))?;
        // An O in a string type x509-parser cannot read (BMPString, say) is left out rather
        // than failing the certificate: without --tls-client-organization it mattered not
        // before, and with it such a certificate names no operator and is refused.
        let organizations = certificate
            .subject()
            .iter_organization()
            .filter_map(|name| name.as_str().ok().map(str::to_owned))
            .collect();
        let not_after =
            timestamp(certificate.validity().not_after.timestamp()).map_err(unreadable)?;
        Ok(ClientCertificate {
            common_names,
            organizations,
            not_after,
        })
    }

    /// Every Common Name of the subject, in certificate order; usually exactly one.
    pub fn common_names(&self) -> &[String] {
        &self.common_names
    }

    /// Every organizationName (O) of the subject, in certificate order: the charging station
    /// operator's name (OCPP 2.0.1 Part 2, A00.FR.404); often none in 1.6 fleets.
    pub fn organizations(&self) -> &[String] {
        &self.organizations
    }

    pub fn not_after(&self) -> DateTime<Utc> {
        self.not_after
    }

    /// The OCPP 1.6 security whitepaper's profile-3 rule: the subject's Common Name equals the
    /// charger's identity. A subject with several Common Names identifies no one, since which
    /// of them would count is a guess.
    pub fn identifies(&self, charger_identity: &str) -> bool {
        matches!(self.common_names.as_slice(), [name] if name == charger_identity)
    }
}

/// When a certificate stops being valid.
pub(crate) fn not_after(der: &CertificateDer<'_>) -> Result<DateTime<Utc>, String> {
    timestamp(parse(der)?.validity().not_after.timestamp())
}

fn parse<'a>(der: &'a CertificateDer<'_>) -> Result<X509Certificate<'a>, String> {
    X509Certificate::from_der(der)
        .map(|(_, certificate)| certificate)
        .map_err(|e| e.to_string())
}

fn timestamp(seconds: i64) -> Result<DateTime<Utc>, String> {
    DateTime::from_timestamp(seconds, 0)
        .ok_or_else(|| format!("notAfter {seconds} is out of range"))
}
