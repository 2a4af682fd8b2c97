//! The security calls' records, built as the gateways publish them (2.0.1's and 1.6's), read
//! into the changes the store and the signer take.

use crate::ingest::materialiser::{ReadingUse, translate};
use bytes::Bytes;
use chrono::Utc;
use cms_bus::contract::header;
use cms_bus::{Header, Headers, Message, Record, Topics};
use cms_store::StateChange;
use cms_store::security::SecurityEvent;
use serde_json::{Value, json};
use std::borrow::Cow;

fn message(topics: &Topics, version: &str, action: &str, payload: Value) -> Message {
    let headers = Headers::from_iter([
        Header::new(header::ACTION, Bytes::copy_from_slice(action.as_bytes())),
        Header::new(header::RECEIVED_AT, "2026-11-21T10:30:00.000000Z"),
        Header::new(
            header::OCPP_VERSION,
            Bytes::copy_from_slice(version.as_bytes()),
        ),
    ]);
    Message {
        record: Record {
            topic: Cow::Borrowed(topics.messages),
            key: Bytes::from_static(b"CP-1"),
            headers,
            value: Bytes::from(payload.to_string()),
        },
        partition: 0,
        offset: 0,
    }
}

fn translated(version: &str, action: &str, payload: Value) -> Option<StateChange> {
    let topics = Topics::with_prefix("t");
    let message = message(&topics, version, action, payload);
    let use_of = ReadingUse::Latest { energy: false };
    translate(&message, &topics, use_of, Utc::now())
}

#[test]
fn a_security_event_of_either_version_is_kept() {
    let payload = json!({
        "type": "TamperDetectionActivated",
        "timestamp": "2026-11-21T10:29:59Z",
        "techInfo": "enclosure opened",
    });
    for version in ["ocpp2.0.1", "ocpp1.6"] {
        let change = translated(version, "SecurityEventNotification", payload.clone());
        assert_eq!(
            change,
            Some(StateChange::SecurityEvent(SecurityEvent {
                identity: "CP-1".into(),
                event_type: "TamperDetectionActivated".into(),
                occurred_at: "2026-11-21T10:29:59.000000Z".into(),
                tech_info: Some("enclosure opened".into()),
                at: "2026-11-21T10:30:00.000000Z".into(),
            })),
            "{version}"
        );
    }
}

#[test]
fn a_signing_request_of_either_version_goes_to_the_signer() {
    let csr = "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n";
    let v201 = json!({"csr": csr, "certificateType": "ChargingStationCertificate"});
    let v16 = json!({"csr": csr});
    for (version, payload, certificate_type) in [
        (
            "ocpp2.0.1",
            v201,
            Some("ChargingStationCertificate".to_string()),
        ),
        ("ocpp1.6", v16, None),
    ] {
        let change = translated(version, "SignCertificate", payload);
        assert_eq!(
            change,
            Some(StateChange::CertificateRequested {
                identity: "CP-1".into(),
                csr: csr.into(),
                certificate_type,
                at: "2026-11-21T10:30:00.000000Z".into(),
            }),
            "{version}"
        );
    }
}

#[test]
fn an_unreadable_security_event_changes_nothing() {
    let change = translated("ocpp2.0.1", "SecurityEventNotification", json!({"type": 1}));
    assert_eq!(change, None);
}
