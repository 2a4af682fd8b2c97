//! Renewal of stations' certificates before they end: every sweep, each station whose current
//! certificate (the newest cms signed for it) ends within the window is asked for a new CSR
//! (2.0.1: TriggerMessage `SignChargingStationCertificate`; 1.6's security extension:
//! ExtendedTriggerMessage `SignChargePointCertificate`), at most once a day per station,
//! claimed in the store so that one replica asks. The gauge `cms_station_certificates_expiring`
//! counts the certificates ending within the window.

use super::StationCertificatesConfig;
use crate::control::actions::{Dispatch, charger_version};
use chrono::Utc;
use cms_bus::{ActionName, RequestedBy};
use cms_ocpp::OcppVersion;
use cms_store::format_record_time;
use cms_store::security::EndingCertificate;
use serde_json::json;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A station is asked again at most this often.
const ASK_AGAIN_AFTER: chrono::Duration = chrono::Duration::days(1);

/// Sweeps until `stop`.
pub async fn renew_certificates(
    dispatch: Arc<Dispatch>,
    config: StationCertificatesConfig,
    stop: CancellationToken,
) {
    let expiring = metrics::gauge!("cms_station_certificates_expiring");
    expiring.set(0.0);
    let window = chrono::Duration::from_std(config.renew_before).unwrap_or(chrono::Duration::MAX);
    let mut ticks = tokio::time::interval(config.sweep_every);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = ticks.tick() => {}
        }
        let now = Utc::now();
        let before = format_record_time(now.checked_add_signed(window).unwrap_or(now));
        let ending = match dispatch.store.station_certificates_ending(&before).await {
            Ok(ending) => ending,
            Err(e) => {
                tracing::warn!(error = %e, "cannot read the certificates ending soon");
                continue;
            }
        };
        expiring.set(ending.len() as f64);
        for certificate in &ending {
            if let Err(e) = ask(&dispatch, certificate, now).await {
                tracing::warn!(identity = %certificate.identity, error = %e,
                    "a station was not asked to renew its certificate");
            }
        }
    }
}

/// Asks the station for a new CSR, unless it was asked within a day (or is offline).
async fn ask(
    dispatch: &Dispatch,
    certificate: &EndingCertificate,
    now: chrono::DateTime<Utc>,
) -> Result<(), String> {
    let store = &dispatch.store;
    let (at, since) = (
        format_record_time(now),
        format_record_time(now - ASK_AGAIN_AFTER),
    );
    let id = certificate.certificate_id;
    if !store
        .claim_certificate_renewal(id, &at, &since)
        .await
        .map_err(|e| e.to_string())?
    {
        return Ok(());
    }
    let version = charger_version(certificate.ocpp_version.as_deref());
    let (action, body) = match version {
        OcppVersion::V201 => (
            ActionName::new("TriggerMessage", version),
            json!({"requestedMessage": "SignChargingStationCertificate"}),
        ),
        OcppVersion::V16 => (
            ActionName::new("ExtendedTriggerMessage", version),
            json!({"requestedMessage": "SignChargePointCertificate"}),
        ),
    };
    let identity = certificate.identity.as_str();
    let taken = dispatch
        .take_live(
            certificate.charger_id,
            identity,
            action,
            body,
            RequestedBy::system(),
        )
        .await
        .map_err(|e| e.to_string())?;
    if taken.is_none() {
        // Offline: asked again at the next sweep after it is back.
        let before = certificate.renewal_asked_at.as_deref();
        store
            .release_certificate_renewal(id, before)
            .await
            .map_err(|e| e.to_string())?;
        return Ok(());
    }
    tracing::info!(target: "cms::security", %identity, not_after = %certificate.not_after,
        "a station was asked for a new CSR: its certificate ends soon");
    Ok(())
}
