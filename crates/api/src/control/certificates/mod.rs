//! Stations' certificates signed by cms (docs/ocpp201.md "Security"): a station's
//! SignCertificate reaches the signer from the materialiser, which sees each record once across
//! the API replicas (so one replica signs each); the CSR is checked, signed by cms's station CA
//! or an external CA's command, kept, and sent back as CertificateSigned through the actions'
//! path (in the station's audit log). A sweep asks stations whose certificate ends soon for a
//! new CSR (renewal.rs). The materialiser also counts critical security events here.

mod renewal;
mod signing;

pub use renewal::renew_certificates;

use cms_store::StateChange;
use cms_tls::station_ca::StationCa;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// CSRs waiting for the signer; past it they are dropped and counted (the station asks again).
const QUEUE: usize = 1024;

/// Who signs stations' certificates.
#[derive(Clone)]
pub enum StationSigner {
    /// cms's own station CA (`--station-ca-cert`/`--station-ca-key`).
    Ca(Arc<StationCa>),
    /// An external CA's command (`--station-ca-command`): the CSR PEM on its stdin, the chain
    /// PEM on its stdout, within `timeout`.
    Command { path: PathBuf, timeout: Duration },
}

/// How stations' certificates are signed and renewed.
#[derive(Clone)]
pub struct StationCertificatesConfig {
    /// `None`: CSRs are refused (logged), nothing is signed.
    pub signer: Option<StationSigner>,
    /// A certificate ending within this is renewed (`--station-cert-renew-before`).
    pub renew_before: Duration,
    /// How often the renewal sweep looks (`--station-cert-sweep-interval`).
    pub sweep_every: Duration,
}

impl Default for StationCertificatesConfig {
    fn default() -> Self {
        StationCertificatesConfig {
            signer: None,
            renew_before: Duration::from_secs(30 * 86_400),
            sweep_every: Duration::from_secs(3600),
        }
    }
}

/// A station's CSR, as the materialiser saw it.
#[derive(Debug, Clone)]
pub struct CertificateRequest {
    pub identity: String,
    pub csr: String,
    pub certificate_type: Option<String>,
}

/// Starts the signer; the sender is the materialiser's.
pub fn start(
    dispatch: Arc<crate::control::actions::Dispatch>,
    signer: Option<StationSigner>,
) -> mpsc::Sender<CertificateRequest> {
    for counter in [
        "cms_security_events_critical_total",
        "cms_station_certificates_signed_total",
        "cms_station_csrs_refused_total",
    ] {
        metrics::counter!(counter).absolute(0);
    }
    let (sender, mut requests) = mpsc::channel(QUEUE);
    tokio::spawn(async move {
        while let Some(request) = requests.recv().await {
            signing::sign(&dispatch, signer.as_ref(), &request).await;
        }
    });
    sender
}

/// What a stored batch tells the signer and the metrics: its CSRs and critical security events.
pub fn note_batch(sender: Option<&mpsc::Sender<CertificateRequest>>, changes: &[StateChange]) {
    for change in changes {
        match change {
            StateChange::SecurityEvent(event)
                if cms_store::security::is_critical(&event.event_type) =>
            {
                metrics::counter!("cms_security_events_critical_total").increment(1);
            }
            StateChange::CertificateRequested {
                identity,
                csr,
                certificate_type,
                ..
            } => {
                let Some(sender) = sender else { continue };
                let request = CertificateRequest {
                    identity: identity.clone(),
                    csr: csr.clone(),
                    certificate_type: certificate_type.clone(),
                };
                if sender.try_send(request).is_err() {
                    tracing::warn!(%identity, "a CSR was dropped: the signer is behind");
                    metrics::counter!("cms_station_csrs_refused_total").increment(1);
                }
            }
            _ => {}
        }
    }
}
