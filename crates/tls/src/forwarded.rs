//! Client certificates that a TLS-terminating load balancer forwards in a request header
//! (OCPP security profile 3 behind a proxy): verified here against the client CA, as the TLS
//! layer would have, before the gateway believes the subject they name.
//!
//! Two forms are read: Envoy's `X-Forwarded-Client-Cert` (`By=...;Hash=...;Cert="<URL-encoded
//! PEM>";Chain="..."`, the first element being the client's), and a URL-encoded PEM alone, as
//! nginx (`$ssl_client_escaped_cert`) and AWS ALB (`X-Amzn-Mtls-Clientcert`) send it.

use std::path::Path;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::ClientCertVerifier;

use crate::TlsError;
use crate::certificate::ClientCertificate;
use crate::config::client_verifier;

/// The client CA, for certificates that arrive in a header instead of a handshake.
#[derive(Clone)]
pub struct ForwardedCertificates {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl std::fmt::Debug for ForwardedCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ForwardedCertificates")
    }
}

impl ForwardedCertificates {
    pub fn load(client_ca: &Path) -> Result<Self, TlsError> {
        let provider = Arc::new(crate::config::provider());
        Ok(ForwardedCertificates {
            verifier: client_verifier(client_ca, &provider)?,
        })
    }

    /// The certificate a header value carries, once it verified against the CA and is valid
    /// now.
    pub fn verify(&self, header_value: &str) -> Result<ClientCertificate, TlsError> {
        let unreadable = |reason: &str| TlsError::UnreadableClientCertificate {
            reason: format!("forwarded certificate: {reason}"),
        };
        let pem = forwarded_pem(header_value).ok_or_else(|| unreadable("none in the header"))?;
        let pem = percent_encoding::percent_decode_str(&pem)
            .decode_utf8()
            .map_err(|_| unreadable("not UTF-8 once decoded"))?;
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<_, _>>()
            .map_err(|e| unreadable(&e.to_string()))?;
        let (end_entity, intermediates) = chain
            .split_first()
            .ok_or_else(|| unreadable("no certificate in the PEM"))?;
        self.verifier
            .verify_client_cert(end_entity, intermediates, UnixTime::now())
            .map_err(|e| unreadable(&e.to_string()))?;
        ClientCertificate::from_der(end_entity)
    }
}

/// The URL-encoded PEM of the client's certificate (with its chain, when sent) in a header
/// value of either form.
fn forwarded_pem(value: &str) -> Option<String> {
    if !value.contains("Cert=") {
        return Some(value.trim().to_string());
    }
    // Envoy: one element per proxy hop, the client's first; fields `Key=value` or
    // `Key="value"`, separated by ';'. URL-encoded PEM holds no ',', ';' or '"'.
    let element = value.split(',').next()?;
    let field = |name: &str| {
        element.split(';').find_map(|pair| {
            let (key, value) = pair.trim().split_once('=')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim_matches('"').to_string())
        })
    };
    let cert = field("Cert")?;
    Some(match field("Chain") {
        Some(chain) => format!("{cert}{chain}"),
        None => cert,
    })
}

#[cfg(test)]
mod tests {
    use super::forwarded_pem;

    #[test]
    fn both_header_forms_give_the_clients_pem() {
        assert_eq!(
            forwarded_pem(" -----BEGIN%20CERT "),
            Some("-----BEGIN%20CERT".into())
        );
        let envoy =
            r#"By=spiffe://gw;Hash=ab12;Cert="-----A%0A";Subject="CN=CP-1",By=x;Cert="-----B""#;
        assert_eq!(forwarded_pem(envoy), Some("-----A%0A".into()));
        let chained = r#"Hash=ab;Cert="-----A";Chain="-----C""#;
        assert_eq!(forwarded_pem(chained), Some("-----A-----C".into()));
        assert_eq!(
            forwarded_pem("Hash=ab;Subject=x;Cert="),
            Some(String::new())
        );
    }
}
