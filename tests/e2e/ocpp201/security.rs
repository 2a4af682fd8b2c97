//! Security (blocks A and M) with the Python `ocpp` package's v201 station
//! (tests/interop/ocpp201_security.py): its security event listed by the REST API; its CSR
//! (made by Python's `cryptography`) signed by cms's station CA and sent in CertificateSigned;
//! the certificate, made to end within the renewal window, renewed without anyone acting
//! (TriggerMessage SignChargingStationCertificate, a new CSR, a new CertificateSigned); and the
//! renewed certificate used by Python's `ssl` for a security-profile-3 connection to the
//! gateway, which trusts the station CA.

use super::{SCRIPT_TIMEOUT, require_python_packages, run_to_end};
use crate::support::station201::python_station;
use crate::support::{Api, Cms, eventually_within};
use cms_tls::test_pki::TestPki;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;
use tempfile::TempDir;

const IDENTITY: &str = "CS-201-SEC";

/// A station CA made by the openssl command line (EC P-256, PKCS#8 key): `(ca.pem, ca.key)`.
pub(crate) fn station_ca(dir: &Path) -> (String, String) {
    let (cert, key) = (dir.join("station-ca.pem"), dir.join("station-ca.key"));
    let out = Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args([
            "-nodes",
            "-days",
            "30",
            "-subj",
            "/CN=Station CA/O=Example CPO",
        ])
        .args(["-addext", "basicConstraints=critical,CA:TRUE"])
        .args(["-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .expect("the openssl command line");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = |p: &Path| p.to_str().expect("utf-8").to_string();
    (path(&cert), path(&key))
}

/// A CSR of the station `identity` made by the openssl command line (EC P-256), PEM.
pub(crate) fn station_csr(dir: &Path, identity: &str) -> String {
    let out = Command::new("openssl")
        .args([
            "req",
            "-new",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args([
            "-nodes",
            "-subj",
            &format!("/CN={identity}/O=Example CPO"),
            "-keyout",
        ])
        .arg(dir.join(format!("{identity}.key")))
        .output()
        .expect("the openssl command line");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The serial of a PEM certificate file, as openssl prints it (hexadecimal).
fn serial_of(file: &Path) -> String {
    let out = Command::new("openssl")
        .args(["x509", "-noout", "-serial", "-in"])
        .arg(file)
        .output()
        .expect("the openssl command line");
    let text = String::from_utf8(out.stdout).unwrap();
    let serial = text.trim().strip_prefix("serial=").expect("serial=HEX");
    serial.to_ascii_lowercase()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_station_s_security_event_is_listed_and_its_certificate_signed_renewed_and_used() {
    require_python_packages().await;
    let dir = TempDir::new().unwrap();
    let pki = TestPki::create(dir.path());
    let (ca, ca_key) = station_ca(dir.path());
    let (chain, key) = (pki.server_chain(), pki.server_key());
    let [chain, key] = [chain.to_str(), key.to_str()].map(|p| p.expect("utf-8"));
    // Certificates of a day, renewed 30 days before they end: each is renewed at once, once.
    let cms = Cms::up_with(&[
        "--ocpp-tls-addr",
        "127.0.0.1:0",
        "--tls-cert",
        chain,
        "--tls-key",
        key,
        "--tls-client-ca",
        &ca,
        "--station-ca-cert",
        &ca,
        "--station-ca-key",
        &ca_key,
        "--station-cert-days",
        "1",
        "--station-cert-sweep-interval",
        "1s",
    ])
    .await;
    let uuid = cms.add_charger(IDENTITY).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let keys = dir.path().join("station");
    std::fs::create_dir(&keys).unwrap();
    let server_ca = pki.ca_certificate();
    let options = [
        "--security-dir",
        keys.to_str().unwrap(),
        "--tls-url",
        &cms.wss_url(IDENTITY),
        "--server-ca",
        server_ca.to_str().unwrap(),
    ];
    let mut station = python_station(&cms.ocpp_url(IDENTITY), IDENTITY, "security", &options);
    station
        .wait_within(SCRIPT_TIMEOUT, "its two certificates", |l| {
            l.get("certificates").is_some()
        })
        .await;
    // Now a profile-3 station: a client certificate, no password.
    let security = json!({"security_profile": 3});
    let path = format!("/api/v3/chargers/{uuid}/security");
    let changed = api.expect(200, "PUT", &path, Some(&security)).await;
    assert_eq!(changed["data"]["security_profile"], 3, "{changed}");
    station.command("profile-3");
    let mut station = run_to_end(station, 0).await;

    let profile_3 = &station
        .printed()
        .iter()
        .find(|l| l.get("profile_3").is_some())
        .cloned();
    let profile_3 = &profile_3.as_ref().expect("a profile-3 connection")["profile_3"];
    assert_eq!(profile_3["boot"]["status"], "Accepted", "{profile_3}");
    let signed = station.lines_where("received", "CertificateSigned");
    assert_eq!(signed.len(), 2, "{signed:?}");
    for line in &signed {
        let payload = &line["payload"];
        assert_eq!(payload["certificateType"], "ChargingStationCertificate");
        let chain = payload["certificateChain"].as_str().unwrap_or_default();
        assert_eq!(chain.matches("BEGIN CERTIFICATE").count(), 2, "{chain}");
    }
    let triggers = station.lines_where("received", "TriggerMessage");
    assert_eq!(triggers.len(), 1, "asked to renew once: {triggers:?}");
    let trigger = &triggers[0]["payload"];
    assert_eq!(
        trigger["requestedMessage"],
        "SignChargingStationCertificate"
    );

    let events = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/security-events"))
        .await;
    assert_eq!(events["data"].as_array().map(Vec::len), Some(1), "{events}");
    let event = &events["data"][0];
    assert_eq!(event["type"], "TamperDetectionActivated", "{event}");
    assert_eq!(event["tech_info"], "enclosure opened", "{event}");
    assert_eq!(event["critical"], true, "{event}");

    // The newest first: the renewed one, which the station presented over TLS.
    let path = format!("/api/v3/chargers/{uuid}/certificates");
    let certificates = api.get_ok(&path).await;
    let data = certificates["data"].as_array().cloned().unwrap_or_default();
    assert_eq!(data.len(), 2, "{certificates}");
    assert_eq!(data[0]["serial"], serial_of(&keys.join("station-2.pem")));
    assert_eq!(data[1]["serial"], serial_of(&keys.join("station-1.pem")));
    assert!(data[1]["renewal_asked_at"].is_string(), "{certificates}");
    assert!(data[0]["renewal_asked_at"].is_null(), "{certificates}");

    // In the audit log, taken by cms itself.
    let log = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/actions"))
        .await;
    let taken: Vec<(&Value, &Value)> = (log["data"].as_array().unwrap().iter())
        .map(|a| (&a["action"], &a["requested_by"]["type"]))
        .filter(|(action, _)| *action != "GetBaseReport")
        .collect();
    let system = json!("system");
    let (signed, trigger) = (json!("CertificateSigned"), json!("TriggerMessage"));
    assert_eq!(
        taken,
        [(&signed, &system), (&trigger, &system), (&signed, &system)],
        "{log}"
    );

    let metrics = api.metrics().await;
    assert_eq!(
        metrics.sum("cms_security_events_critical_total", &[]),
        Some(1.0)
    );
    assert_eq!(
        metrics.sum("cms_station_certificates_signed_total", &[]),
        Some(2.0)
    );
    eventually_within(Duration::from_secs(5), "the expiring gauge", async || {
        let metrics = api.metrics().await;
        match metrics.sum("cms_station_certificates_expiring", &[]) {
            Some(1.0) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_security_lists_keep_to_the_charger_s_team_and_scope() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CS-201-SEC-ACL").await;
    let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
    let no_scope = cms
        .create_token("operator@example.com", Some("sites:read"))
        .await;
    let no_scope = Api::new(&cms, &no_scope);
    let operator = Api::new(&cms, &cms.operator_token().await);
    for list in ["security-events", "certificates"] {
        let path = format!("/api/v3/chargers/{uuid}/{list}");
        let empty = operator.get_ok(&path).await;
        assert_eq!(empty["data"], json!([]), "{empty}");
        assert_eq!(guest.get(&path).await.status, 404, "another team's: {path}");
        assert_eq!(
            no_scope.get(&path).await.status,
            403,
            "no chargers:read: {path}"
        );
        let invalid = operator.get(&format!("{path}?page=0")).await;
        assert_eq!(invalid.status, 422, "{}", invalid.body);
        let body: Value = serde_json::from_str(&invalid.body).unwrap();
        assert!(body["errors"]["page"].is_array(), "{body}");
    }
}

/// A CSR for another station's identity: its SignCertificate is Accepted (the answer comes
/// before the check), then cms refuses it, says so in its log and counts it, and sends nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_csr_for_another_identity_is_refused_and_nothing_is_sent() {
    let dir = TempDir::new().unwrap();
    let (ca, ca_key) = station_ca(dir.path());
    let cms = Cms::up_with(&["--station-ca-cert", &ca, "--station-ca-key", &ca_key]).await;
    let identity = "CS-201-SEC-NO";
    let uuid = cms.add_charger(identity).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let mut station =
        crate::support::station201::RawStation201::connect(cms.ocpp_addr(), identity).await;
    station.boot().await;
    let report = station.call_from_cms("GetBaseReport").await;
    station
        .answer(&report, json!({"status": "NotSupported"}))
        .await;
    let csr = station_csr(dir.path(), "CS-201-SOMEONE-ELSE");
    let request = json!({"csr": csr, "certificateType": "ChargingStationCertificate"});
    let answer = station
        .call_text("SignCertificate", &request.to_string())
        .await;
    assert_eq!(answer[2], json!({"status": "Accepted"}), "{answer}");
    eventually_within(Duration::from_secs(5), "the refusal counted", async || {
        let metrics = api.metrics().await;
        match metrics.sum("cms_station_csrs_refused_total", &[]) {
            Some(1.0) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert!(
        cms.log()
            .contains("certificate signing request was refused"),
        "{}",
        cms.log_tail()
    );
    // Nothing sent: a Heartbeat's answer is the next frame, no CALL of cms before it.
    station.heartbeat().await;
    assert!(
        station.calls_from_cms.is_empty(),
        "{:?}",
        station.calls_from_cms
    );
    let path = format!("/api/v3/chargers/{uuid}/certificates");
    assert_eq!(api.get_ok(&path).await["data"], json!([]));
    let log = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/actions"))
        .await;
    let actions: Vec<&Value> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["action"])
        .collect();
    assert_eq!(actions, [&json!("GetBaseReport")], "{log}");
}
