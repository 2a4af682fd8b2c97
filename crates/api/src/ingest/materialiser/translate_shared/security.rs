//! Security (docs/ocpp201.md "Security"): a station's SecurityEventNotification and
//! SignCertificate, alike in 2.0.1 and 1.6's security extension (1.6 has no
//! `certificateType`).

use chrono::{DateTime, Utc};
use cms_store::security::SecurityEvent;
use cms_store::{StateChange, format_record_time};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    #[serde(rename = "type")]
    event_type: String,
    timestamp: DateTime<Utc>,
    tech_info: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sign {
    csr: String,
    certificate_type: Option<String>,
}

/// A SecurityEventNotification as a change; `None` when it does not read.
pub(super) fn security_event(identity: &str, payload: &str, at: &str) -> Option<StateChange> {
    let event: Event = super::read(payload)?;
    Some(StateChange::SecurityEvent(SecurityEvent {
        identity: identity.to_string(),
        event_type: event.event_type,
        occurred_at: format_record_time(event.timestamp),
        tech_info: event.tech_info,
        at: at.to_string(),
    }))
}

/// A SignCertificate as a change (for the signer); `None` when it does not read.
pub(super) fn sign_certificate(identity: &str, payload: &str, at: &str) -> Option<StateChange> {
    let sign: Sign = super::read(payload)?;
    Some(StateChange::CertificateRequested {
        identity: identity.to_string(),
        csr: sign.csr,
        certificate_type: sign.certificate_type,
        at: at.to_string(),
    })
}

#[cfg(test)]
mod tests;
