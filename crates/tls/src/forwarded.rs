//! Client certificates that a TLS-terminating load balancer forwards in a request header
//! (OCPP security profile 3 behind a proxy): verified here against the client CA and CRLs, as
//! the TLS layer would have, before the gateway believes the subject they name.
//!
//! Two forms are read: Envoy's `X-Forwarded-Client-Cert` (`By=...;Hash=...;Cert="<URL-encoded
//! PEM>";Chain="..."`, one comma-separated element per proxy that appended one, the nearest
//! last), and a URL-encoded PEM alone, as nginx (`$ssl_client_escaped_cert`) and AWS ALB
//! (`X-Amzn-Mtls-Clientcert`) send it. Only the nearest element counts.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use rustls::server::danger::ClientCertVerifier;

use crate::TlsError;
use crate::certificate::ClientCertificate;
use crate::client_trust::{client_verifier, verify_chain};
use crate::fingerprint::Fingerprints;
use crate::metrics;
use crate::watch::{Reload, ReloadCause};

/// The client CA and CRLs, for certificates that arrive in a header instead of a handshake;
/// reloaded when the files change, as the wss listener's are. Cheap to clone.
#[derive(Clone)]
pub struct ForwardedCertificates {
    shared: Arc<Shared>,
}

struct Shared {
    client_ca: PathBuf,
    client_crl: Option<PathBuf>,
    provider: Arc<rustls::crypto::CryptoProvider>,
    verifier: RwLock<Arc<dyn ClientCertVerifier>>,
    /// The files as they were when last read; held for the whole of a reload.
    last_read: Mutex<Fingerprints>,
}

/// The `listener` label of this copy's reloads in `cms_tls_reloads_total`.
const LABEL: &str = "forwarded";

impl std::fmt::Debug for ForwardedCertificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForwardedCertificates")
            .field("client_ca", &self.shared.client_ca)
            .field("client_crl", &self.shared.client_crl)
            .finish_non_exhaustive()
    }
}

impl ForwardedCertificates {
    /// Reads the client CA and, when given, its CRLs.
    pub fn load(
        client_ca: impl Into<PathBuf>,
        client_crl: Option<PathBuf>,
    ) -> Result<Self, TlsError> {
        let client_ca = client_ca.into();
        let provider = Arc::new(crate::config::provider());
        let last_read = Fingerprints::of_paths([Some(&client_ca), client_crl.as_ref()]);
        let (verifier, _) = client_verifier(&client_ca, client_crl.as_deref(), &provider)?;
        Ok(ForwardedCertificates {
            shared: Arc::new(Shared {
                client_ca,
                client_crl,
                provider,
                verifier: RwLock::new(verifier),
                last_read: Mutex::new(last_read),
            }),
        })
    }

    /// The certificate a header value carries in its nearest element, once it verified against
    /// the CA and CRLs and is valid now.
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
        let end_entity = chain
            .first()
            .ok_or_else(|| unreadable("no certificate in the PEM"))?;
        let verifier = self
            .shared
            .verifier
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        verify_chain(verifier.as_ref(), &chain).map_err(TlsError::ClientCertificateRefused)?;
        ClientCertificate::from_der(end_entity)
    }

    /// Spawns the task that reloads the CA and CRLs on SIGHUP and when a file changes (as
    /// [`crate::ServerTls::watch`]).
    pub fn watch(
        &self,
        poll_every: std::time::Duration,
        shutdown: tokio_util::sync::CancellationToken,
    ) -> std::io::Result<tokio::task::JoinHandle<()>> {
        crate::watch::watch(self.clone(), poll_every, shutdown)
    }

    fn fingerprints(&self) -> Fingerprints {
        let shared = &self.shared;
        Fingerprints::of_paths([Some(&shared.client_ca), shared.client_crl.as_ref()])
    }

    fn reload_locked(
        &self,
        last_read: &mut Fingerprints,
        cause: ReloadCause,
    ) -> Result<(), TlsError> {
        let shared = &self.shared;
        *last_read = self.fingerprints();
        let built = client_verifier(
            &shared.client_ca,
            shared.client_crl.as_deref(),
            &shared.provider,
        );
        match built {
            Ok((verifier, _)) => {
                *shared
                    .verifier
                    .write()
                    .unwrap_or_else(PoisonError::into_inner) = verifier;
                metrics::count_reload(LABEL, true);
                tracing::info!(?cause, "client CA for forwarded certificates reloaded");
                Ok(())
            }
            Err(error) => {
                metrics::count_reload(LABEL, false);
                tracing::warn!(
                    ?cause, %error,
                    "client CA reload for forwarded certificates failed; the previous one stays"
                );
                Err(error)
            }
        }
    }

    fn lock_last_read(&self) -> std::sync::MutexGuard<'_, Fingerprints> {
        self.shared
            .last_read
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl Reload for ForwardedCertificates {
    fn reload_because(&self, cause: ReloadCause) -> Result<(), TlsError> {
        self.reload_locked(&mut self.lock_last_read(), cause)
    }

    fn reload_if_changed(&self) -> Option<Result<(), TlsError>> {
        let mut last_read = self.lock_last_read();
        if self.fingerprints() == *last_read {
            return None;
        }
        Some(self.reload_locked(&mut last_read, ReloadCause::FileChanged))
    }
}

/// The URL-encoded PEM of the client's certificate (with its chain, when sent) in a header
/// value of either form, taken from its nearest element: the last, which the proxy in front
/// of cms appended. Elements before it came from further away, the client included, and prove
/// nothing. (A header sent on several lines is read as their values joined by commas.)
fn forwarded_pem(value: &str) -> Option<String> {
    let element = split_unquoted(value, ',').last()?.trim();
    if !element.contains("Cert=") {
        return Some(element.to_string());
    }
    // Envoy: fields `Key=value` or `Key="value"`, separated by ';'; a value holding ',', ';'
    // or '=' is quoted (a Subject often is). URL-encoded PEM holds none of them.
    let field = |name: &str| {
        split_unquoted(element, ';').find_map(|pair| {
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

/// The parts of `text` between the `separator`s that are outside double quotes (where `\"`
/// is a quote escaped).
fn split_unquoted(text: &str, separator: char) -> impl Iterator<Item = &str> {
    let mut quoted = false;
    let mut escaped = false;
    let mut start = 0;
    let mut parts = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == separator && !quoted => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter()
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
        let envoy = r#"By=spiffe://gw;Hash=ab12;Cert="-----A%0A";Subject="CN=CP-1""#;
        assert_eq!(forwarded_pem(envoy), Some("-----A%0A".into()));
        let chained = r#"Hash=ab;Cert="-----A";Chain="-----C""#;
        assert_eq!(forwarded_pem(chained), Some("-----A-----C".into()));
        assert_eq!(
            forwarded_pem("Hash=ab;Subject=x;Cert="),
            Some(String::new())
        );
    }

    #[test]
    fn only_the_nearest_element_counts_not_one_a_client_put_first() {
        let injected_first = r#"By=x;Cert="-----INJECTED",By=spiffe://lb;Cert="-----OWN""#;
        assert_eq!(forwarded_pem(injected_first), Some("-----OWN".into()));
        // nginx's form after a header line the client sent itself.
        assert_eq!(
            forwarded_pem("-----INJECTED, -----OWN"),
            Some("-----OWN".into())
        );
    }

    #[test]
    fn commas_and_semicolons_inside_quotes_split_nothing() {
        let quoted = r#"By=x;Cert="-----A",Subject="CN=CP-1,O=Acme; Ltd";Cert="-----B";URI="""#;
        assert_eq!(forwarded_pem(quoted), Some("-----B".into()));
        let escaped = r#"Cert="-----A",Subject="CN=\"a,b\"";Cert="-----B""#;
        assert_eq!(forwarded_pem(escaped), Some("-----B".into()));
    }
}
