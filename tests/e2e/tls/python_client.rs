//! The third-party TLS client: tests/interop/tls_charger.py, Python's `ssl` (OpenSSL) with the
//! `ocpp` package's charge point, or an HTTPS GET. One run is one connection attempt; its
//! outcome comes back as the script's JSON line.

use crate::support::python::{Output, python3};
use cms_tls::test_pki::{ClientFiles, TestPki};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// The script bounds itself to 10 s; this is the backstop.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(20);

/// What the client presents besides trusting the PKI's CA.
#[derive(Default)]
pub struct Presenting<'a> {
    pub certificate: Option<&'a ClientFiles>,
    pub bearer: Option<&'a str>,
    /// Speak OCPP 2.0.1 (offer `ocpp2.0.1`, the `ocpp` package's v201 ChargePoint) instead
    /// of 1.6.
    pub ocpp201: bool,
}

/// Runs the script against `url` (Basic credentials go in it) and returns its outcome, e.g.
/// `{"outcome": "refused", "status": 403, "body": "..."}`.
pub async fn attempt(pki: &TestPki, url: &str, presenting: Presenting<'_>) -> Value {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/tls_charger.py");
    let mut args: Vec<String> = vec![
        script.display().to_string(),
        url.to_string(),
        "--ca".into(),
        pki.ca_certificate().display().to_string(),
    ];
    if let Some(files) = presenting.certificate {
        args.extend([
            "--certificate".into(),
            files.certificate.display().to_string(),
            "--private-key".into(),
            files.private_key.display().to_string(),
        ]);
    }
    if let Some(token) = presenting.bearer {
        args.extend(["--bearer".into(), token.to_string()]);
    }
    if presenting.ocpp201 {
        args.extend(["--ocpp".into(), "2.0.1".into()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let Output {
        status,
        stdout,
        stderr,
    } = python3(&args, SCRIPT_TIMEOUT)
        .await
        .unwrap_or_else(|e| panic!("tls_charger.py {url}: {e}"));
    let outcome = stdout
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok());
    match outcome {
        Some(outcome) if status.success() => outcome,
        _ => panic!(
            "tls_charger.py {url} broke ({status}); it needs python3 with the packages of \
             tests/interop/requirements.txt.\nstdout:\n{stdout}\nstderr:\n{stderr}"
        ),
    }
}

/// Fails the test unless the charge point got in and had its BootNotification accepted and its
/// Heartbeat answered.
pub fn expect_charging_session(outcome: &Value, what: &str) {
    expect_session_in(outcome, "ocpp1.6", what);
}

/// As [`expect_charging_session`], for a charge point that speaks `subprotocol`.
pub fn expect_session_in(outcome: &Value, subprotocol: &str, what: &str) {
    let answered = outcome["outcome"] == "connected"
        && outcome["subprotocol"] == subprotocol
        && outcome["boot"]["status"] == "Accepted"
        && outcome["heartbeat"]["current_time"].is_string();
    assert!(
        answered,
        "{what}: expected the charge point to get in ({subprotocol}), its boot Accepted and its \
         heartbeat answered; it saw {outcome}"
    );
}

/// Fails the test unless the upgrade was answered with `status` before any websocket.
pub fn expect_refused(outcome: &Value, status: u16, what: &str) {
    assert!(
        outcome["outcome"] == "refused" && outcome["status"] == status,
        "{what}: expected the upgrade refused with {status}; the charge point saw {outcome}"
    );
}

/// Fails the test unless TLS itself turned the client away with an alert that names `alert`
/// (as OpenSSL words it, e.g. "unknown ca"), before any HTTP.
pub fn expect_tls_failure(outcome: &Value, alert: &str, what: &str) {
    let error = outcome["error"].as_str().unwrap_or_default();
    assert!(
        outcome["outcome"] == "tls_failed" && error.to_lowercase().contains(alert),
        "{what}: expected the TLS handshake to fail with an alert saying {alert:?}; the \
         charge point saw {outcome}"
    );
}

/// The DER of the leaf certificate the server presented to the script, from its outcome.
pub fn shown_certificate(outcome: &Value) -> Vec<u8> {
    use base64::Engine;
    let der = outcome["server_certificate"]["der_base64"].as_str();
    let der = der.unwrap_or_else(|| panic!("no server certificate in {outcome}"));
    base64::engine::general_purpose::STANDARD
        .decode(der)
        .expect("base64 DER")
}
