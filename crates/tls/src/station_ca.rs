//! Station certificates signed by cms (docs/ocpp201.md "Security"): a station's certificate
//! signing request checked ([`check_csr`]: a PKCS#10 request, PEM or base64 DER, whose
//! signature holds, with an RSA key of 2048 bits or more or an EC key on P-256 or P-384, and a
//! subject whose Common Name is the station's identity and that names an Organization, as
//! OCPP's security part requires), then signed by the CA cms is configured with
//! ([`StationCa`], `--station-ca-cert`/`--station-ca-key`). What an external CA returns is
//! read by [`describe_chain`] the same way.

use std::path::{Path, PathBuf};

use base64::Engine;
use chrono::{DateTime, Utc};
use rcgen::{
    CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    PublicKeyData, SerialNumber, SignatureAlgorithm,
};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateSigningRequestDer};
use x509_parser::certification_request::X509CertificationRequest;
use x509_parser::oid_registry::{OID_EC_P256, OID_NIST_EC_P384};
use x509_parser::prelude::FromDer;
use x509_parser::public_key::PublicKey;

/// The smallest RSA key a station's certificate may have, in bits.
pub const MIN_RSA_BITS: usize = 2048;

/// The CA that signs stations' certificates, with the chain sent to them after the
/// certificate.
pub struct StationCa {
    issuer: Issuer<'static, KeyPair>,
    /// The CA file's certificates, PEM (the CA's own, then any above it).
    ca_chain_pem: String,
    /// How long a certificate it signs is valid.
    days: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum StationCaError {
    #[error("cannot read the station CA file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the station CA file {path} is not usable: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

/// Why a CSR was refused (said in the security log line; the station is sent nothing).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CsrRefused(pub String);

/// A CSR that passed [`check_csr`]: what the certificate is made of.
pub struct CheckedCsr {
    /// The subject's attributes kept in the certificate: CN, O, and OU and C when given.
    subject: Vec<(DnType, String)>,
    key: StationKey,
}

/// A signed certificate and the chain sent to the station.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signed {
    /// The certificate first, then the CA's chain, PEM.
    pub chain_pem: String,
    /// The certificate's serial number, hexadecimal.
    pub serial: String,
    pub not_after: DateTime<Utc>,
    /// SHA-256 of the certificate's DER, hexadecimal.
    pub fingerprint: String,
}

impl StationCa {
    /// Loads the CA's certificate (PEM, the first of the file; any others are sent along as
    /// its chain) and private key (PKCS#8 PEM); they must match.
    pub fn load(cert: &Path, key: &Path, days: u32) -> Result<StationCa, StationCaError> {
        let read = |path: &Path| {
            std::fs::read_to_string(path).map_err(|source| StationCaError::Read {
                path: path.to_path_buf(),
                source,
            })
        };
        let invalid = |path: &Path, reason: String| StationCaError::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        let (cert_pem, key_pem) = (read(cert)?, read(key)?);
        let certificates: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(cert_pem.as_bytes())
                .collect::<Result<_, _>>()
                .map_err(|e| invalid(cert, format!("not PEM certificates: {e}")))?;
        let first = certificates
            .first()
            .ok_or_else(|| invalid(cert, "no certificate in it".into()))?;
        let key_pair =
            KeyPair::from_pem(&key_pem).map_err(|e| invalid(key, format!("not a key: {e}")))?;
        let (_, parsed) = x509_parser::parse_x509_certificate(first)
            .map_err(|e| invalid(cert, format!("not a certificate: {e}")))?;
        if parsed.tbs_certificate.subject_pki.raw != key_pair.subject_public_key_info() {
            return Err(invalid(key, "not the key of the CA's certificate".into()));
        }
        let issuer = Issuer::from_ca_cert_der(first, key_pair)
            .map_err(|e| invalid(cert, format!("not a CA certificate: {e}")))?;
        let ca_chain_pem = certificates.iter().map(|c| pem_of(c)).collect();
        Ok(StationCa {
            issuer,
            ca_chain_pem,
            days,
        })
    }

    /// Signs a checked CSR: a client certificate (TLS client authentication) valid from a few
    /// minutes ago (stations' clocks drift) for the configured days.
    pub fn sign(&self, csr: &CheckedCsr) -> Result<Signed, String> {
        let mut params = CertificateParams::default();
        for (kind, value) in &csr.subject {
            params.distinguished_name.push(kind.clone(), value.as_str());
        }
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - time::Duration::minutes(5);
        params.not_after = now + time::Duration::days(i64::from(self.days));
        params.serial_number = Some(random_serial()?);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        if csr.key.alg == &rcgen::PKCS_RSA_SHA256 {
            params.key_usages.push(KeyUsagePurpose::KeyEncipherment);
        } else {
            params.key_usages.push(KeyUsagePurpose::KeyAgreement);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.use_authority_key_identifier_extension = true;
        let certificate = params
            .signed_by(&csr.key, &self.issuer)
            .map_err(|e| format!("signing failed: {e}"))?;
        let chain_pem = format!("{}{}", pem_of(certificate.der()), self.ca_chain_pem);
        describe_chain(&chain_pem)
    }
}

/// Checks a station's CSR (see the module's documentation) for the station `identity`.
pub fn check_csr(text: &str, identity: &str) -> Result<CheckedCsr, CsrRefused> {
    let refused = |reason: &str| CsrRefused(reason.to_string());
    let der = match text.contains("-----BEGIN") {
        true => CertificateSigningRequestDer::from_pem_slice(text.as_bytes())
            .map_err(|_| refused("not a PEM certificate request"))?
            .as_ref()
            .to_vec(),
        false => {
            let compact: String = text.split_whitespace().collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact)
                .map_err(|_| refused("neither PEM nor base64 DER"))?
        }
    };
    let (_, csr) = X509CertificationRequest::from_der(&der)
        .map_err(|_| refused("not a PKCS#10 certificate request"))?;
    let info = &csr.certification_request_info;
    let common_name = info
        .subject
        .iter_common_name()
        .next()
        .and_then(|cn| cn.as_str().ok());
    if common_name != Some(identity) {
        return Err(CsrRefused(format!(
            "its subject's CN is {common_name:?}, not the station's identity"
        )));
    }
    let organization = info
        .subject
        .iter_organization()
        .next()
        .and_then(|o| o.as_str().ok())
        .filter(|o| !o.trim().is_empty())
        .ok_or_else(|| refused("its subject names no Organization (O)"))?;
    let mut subject = vec![
        (DnType::CommonName, identity.to_string()),
        (DnType::OrganizationName, organization.to_string()),
    ];
    let unit = info.subject.iter_organizational_unit().next();
    if let Some(unit) = unit.and_then(|u| u.as_str().ok()) {
        subject.push((DnType::OrganizationalUnitName, unit.to_string()));
    }
    let country = info.subject.iter_country().next();
    if let Some(country) = country.and_then(|c| c.as_str().ok()) {
        subject.push((DnType::CountryName, country.to_string()));
    }
    let spki = &info.subject_pki;
    let alg: &'static SignatureAlgorithm = match spki.parsed() {
        Ok(PublicKey::RSA(rsa)) if rsa.key_size() >= MIN_RSA_BITS => &rcgen::PKCS_RSA_SHA256,
        Ok(PublicKey::RSA(rsa)) => {
            return Err(CsrRefused(format!(
                "its RSA key has {} bits, fewer than {MIN_RSA_BITS}",
                rsa.key_size()
            )));
        }
        Ok(PublicKey::EC(_)) => {
            let curve = spki
                .algorithm
                .parameters
                .as_ref()
                .and_then(|p| p.as_oid().ok());
            match curve {
                Some(oid) if oid == OID_EC_P256 => &rcgen::PKCS_ECDSA_P256_SHA256,
                Some(oid) if oid == OID_NIST_EC_P384 => &rcgen::PKCS_ECDSA_P384_SHA384,
                _ => return Err(refused("its EC key is on neither P-256 nor P-384")),
            }
        }
        _ => return Err(refused("its key is neither RSA nor EC")),
    };
    // After the key's checks: ring verifies no RSA signature of a key under 2048 bits.
    csr.verify_signature()
        .map_err(|_| refused("its signature does not verify"))?;
    let key = StationKey {
        raw: spki.subject_public_key.data.to_vec(),
        alg,
    };
    Ok(CheckedCsr { subject, key })
}

/// Reads a chain (PEM, the station's certificate first): its serial, end and fingerprint.
pub fn describe_chain(chain_pem: &str) -> Result<Signed, String> {
    let first = CertificateDer::pem_slice_iter(chain_pem.as_bytes())
        .next()
        .ok_or("no certificate in the chain")?
        .map_err(|e| format!("not a PEM chain: {e}"))?;
    let (_, certificate) = x509_parser::parse_x509_certificate(&first)
        .map_err(|e| format!("not a certificate: {e}"))?;
    let not_after = certificate.validity().not_after.timestamp();
    let not_after = DateTime::from_timestamp(not_after, 0).ok_or("an end out of range")?;
    let digest = ring::digest::digest(&ring::digest::SHA256, &first);
    Ok(Signed {
        chain_pem: chain_pem.to_string(),
        serial: hex(certificate.raw_serial()),
        not_after,
        fingerprint: hex(digest.as_ref()),
    })
}

/// The station's public key as the CSR gave it, with the algorithm of its kind (the one its
/// SubjectPublicKeyInfo names: RSA, or EC on its curve).
struct StationKey {
    raw: Vec<u8>,
    alg: &'static SignatureAlgorithm,
}

impl PublicKeyData for StationKey {
    fn der_bytes(&self) -> &[u8] {
        &self.raw
    }

    fn algorithm(&self) -> &'static SignatureAlgorithm {
        self.alg
    }
}

/// A positive random serial of 16 bytes (RFC 5280 allows up to 20).
fn random_serial() -> Result<SerialNumber, String> {
    let mut bytes = [0u8; 16];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| "no randomness for a serial number")?;
    bytes[0] = (bytes[0] & 0x7f) | 0x01;
    Ok(SerialNumber::from_slice(&bytes))
}

fn pem_of(der: &[u8]) -> String {
    let body = base64::engine::general_purpose::STANDARD.encode(der);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(64)
        .map(|line| std::str::from_utf8(line).unwrap_or_default())
        .collect();
    format!(
        "-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n",
        lines.join("\n")
    )
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
#[path = "station_ca/tests.rs"]
mod tests;
