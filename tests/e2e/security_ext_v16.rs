//! The OCA's security extension for OCPP 1.6-J, end to end, as deployed (a `cms api` and a
//! `cms gateway` on a Kafka broker): a third-party 1.6 charge point (the Python `ocpp`
//! package's v16 ChargePoint, which checks every message both ways against the OCA's schemas:
//! tests/interop/ocpp16_security_ext.py) sends the extension's 4 calls, each answered and
//! published on the messages topic as its own bytes; then the 7 calls of the extension are sent
//! to it through the REST API, answered, and kept in its audit log. And in `cms up`, a call of
//! the extension that breaks its schema gets 1.6's CALLERROR, and the connection lives on.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use crate::support::peer::Peer;
use crate::support::topic::{TopicRecord, read_topic_until};
use crate::support::{Api, Charger, Cms};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long a new charger may take to reach the gateway's registry over the broker.
const REGISTRY_PROPAGATION: Duration = Duration::from_secs(20);
/// How long the charge point may take to start Python, connect, boot and send its 4 calls.
const READY: Duration = Duration::from_secs(30);
/// How long a call it makes after answering one of cms may take to be printed.
const LINE: Duration = Duration::from_secs(15);
/// The CSR it renews its certificate with (ocpp16_security_ext.py's RENEWED_CSR).
const RENEWED_CSR: &str = "-----BEGIN CERTIFICATE REQUEST-----\nMIIBeTCCAR8CAQAwRENEW\n-----END CERTIFICATE REQUEST-----\n";

/// Its 4 calls, and the answer each gets.
fn its_calls() -> [(&'static str, Value); 4] {
    [
        ("SecurityEventNotification", json!({})),
        ("SignCertificate", json!({"status": "Accepted"})),
        ("SignedFirmwareStatusNotification", json!({})),
        ("LogStatusNotification", json!({})),
    ]
}

/// The extension's 7 calls as the REST API takes them, and what the charge point answers.
fn our_calls() -> [(&'static str, &'static str, Value, Value); 7] {
    let accepted = json!({"status": "Accepted"});
    let hash = json!({
        "hashAlgorithm": "SHA256",
        "issuerNameHash": "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",
        "issuerKeyHash": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
        "serialNumber": "4c1f3a"
    });
    let pem = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ\n-----END CERTIFICATE-----\n";
    [
        (
            "certificate-signed",
            "CertificateSigned",
            json!({"certificateChain": pem}),
            accepted.clone(),
        ),
        (
            "install-certificate",
            "InstallCertificate",
            json!({"certificateType": "CentralSystemRootCertificate", "certificate": pem}),
            accepted.clone(),
        ),
        (
            "get-installed-certificate-ids",
            "GetInstalledCertificateIds",
            json!({"certificateType": "CentralSystemRootCertificate"}),
            json!({"status": "Accepted", "certificateHashData": [hash.clone()]}),
        ),
        (
            "delete-certificate",
            "DeleteCertificate",
            json!({"certificateHashData": hash}),
            accepted.clone(),
        ),
        (
            "extended-trigger-message",
            "ExtendedTriggerMessage",
            json!({"requestedMessage": "SignChargePointCertificate"}),
            accepted.clone(),
        ),
        (
            "get-log",
            "GetLog",
            json!({"logType": "SecurityLog", "requestId": 7,
                "log": {"remoteLocation": "https://logs.example.com/upload"}}),
            json!({"status": "Accepted", "filename": "security-7.log"}),
        ),
        (
            "signed-update-firmware",
            "SignedUpdateFirmware",
            json!({"requestId": 3, "firmware": {
                "location": "https://fw.example.com/wallbox/1.6.0.bin",
                "retrieveDateTime": "2026-11-22T02:00:00Z",
                "signingCertificate": pem,
                "signature": "MEUCIQDx"}}),
            accepted,
        ),
    ]
}

fn charge_point(url: &str, identity: &str) -> Peer {
    charge_point_with(url, identity, &[])
}

/// [`charge_point`] with the script's options (`--csr FILE`, `--for S`).
fn charge_point_with(url: &str, identity: &str, options: &[&str]) -> Peer {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop");
    let script = dir.join("ocpp16_security_ext.py");
    let mut args = vec![script.to_str().expect("utf-8 path"), url, identity];
    args.extend_from_slice(options);
    let needs = "the security extension's test needs python3 with the packages of \
                 tests/interop/requirements.txt (scripts/test installs them)";
    let name = format!("the Python 1.6 charge point {identity}");
    Peer::start(name, "python3", &dir, &args, needs)
}

/// The `sent` lines of `action`, each answered with a CALLRESULT.
fn answered_calls(charger: &mut Peer, action: &str) -> Vec<Value> {
    let sent = charger.lines_where("sent", action);
    for line in &sent {
        assert!(
            line.get("error").is_none() && line["answer"].is_object(),
            "cms should answer {action} with a CALLRESULT: {line}"
        );
    }
    sent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_a_16_charger_speaks_the_security_extension() {
    let broker = Broker::shared().await;
    let fleet = Fleet::start(&broker.brokers, &["gw-a"]).await;
    let identity = "CP-SEC-EXT-16";
    let added = Instant::now();
    let uuid = fleet.add_charger(identity).await;
    fleet
        .wait_until_accepted(identity, &["gw-a"], added, REGISTRY_PROPAGATION)
        .await;
    let url = format!("ws://{}/ocpp/{identity}", fleet.gateway("gw-a").ocpp_addr);
    let mut charger = charge_point(&url, identity);
    charger
        .wait_within(READY, "its 4 calls answered", |l| l.get("ready").is_some())
        .await;
    charger.assert_nothing_unexpected();

    // Its 4 calls: answered as their response schemas ask.
    let mut sent_payloads = Vec::new();
    for (action, answer) in its_calls() {
        let sent = answered_calls(&mut charger, action);
        assert_eq!(sent[0]["answer"], answer, "{action}: {:?}", sent[0]);
        sent_payloads.push((action, sent[0]["payload"].clone()));
    }

    // The 7 of cms, through the REST API, each answered and in the audit log (once the API
    // consumed the connection: the actions go to the charger's session).
    let api = fleet.rest().await;
    api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
        .await;
    for (segment, action, body, answer) in our_calls() {
        let path = format!("/api/v3/chargers/{uuid}/actions/{segment}?wait=30");
        let done = api.expect(200, "POST", &path, Some(&body)).await;
        let done = &done["data"];
        assert_eq!(done["status"], "answered", "{segment}: {done}");
        assert_eq!(done["action"], action, "{done}");
        assert_eq!(done["request"], body, "{done}");
        assert_eq!(done["response"], answer, "{done}");
        let received = charger.lines_where("received", action);
        assert_eq!(received.len(), 1, "{action} reached the charger once");
        assert_eq!(received[0]["payload"], body, "what reached it");
    }
    let log = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/actions?per_page=50"))
        .await;
    let logged: Vec<&Value> = log["data"].as_array().expect("a list").iter().collect();
    for (_, action, body, answer) in our_calls() {
        let entry = logged
            .iter()
            .find(|a| a["action"] == action)
            .unwrap_or_else(|| panic!("{action} is not in the audit log: {log}"));
        assert_eq!(entry["status"], "answered", "{entry}");
        assert_eq!(entry["request"], body, "{entry}");
        assert_eq!(entry["response"], answer, "{entry}");
    }

    // What it sent after answering: its renewal's CSR, its log's upload, its firmware's download.
    let after = [
        ("SignCertificate", "csr", json!(RENEWED_CSR)),
        ("LogStatusNotification", "requestId", json!(7)),
        ("SignedFirmwareStatusNotification", "requestId", json!(3)),
    ];
    for (action, field, value) in after {
        let line = charger
            .wait_within(LINE, action, |l| {
                l["sent"] == action && l["payload"][field] == value
            })
            .await;
        assert!(line.get("error").is_none(), "{line}");
    }
    assert_eq!(
        answered_calls(&mut charger, "SignCertificate")[1]["answer"],
        json!({"status": "Accepted"})
    );
    let upload = &answered_calls(&mut charger, "LogStatusNotification")[1];
    assert_eq!(
        upload["payload"],
        json!({"status": "Uploaded", "requestId": 7})
    );
    assert_eq!(upload["answer"], json!({}));
    let download = &answered_calls(&mut charger, "SignedFirmwareStatusNotification")[1];
    assert_eq!(
        download["payload"],
        json!({"status": "Downloading", "requestId": 3})
    );

    // Published as 2.0.1's are: the charger's own payload, its action and its version.
    let topic = fleet.messages_topic();
    let records = read_topic_until(&fleet.brokers, &topic, |records: &[TopicRecord]| {
        records
            .iter()
            .filter(|r| r.header("action") == Some("SignCertificate"))
            .count()
            >= 2
    })
    .await;
    for (action, payload) in sent_payloads {
        let record = records
            .iter()
            .find(|r| r.header("action") == Some(action))
            .unwrap_or_else(|| panic!("no {action} record on {topic}"));
        assert_eq!(record.key_str(), identity);
        assert_eq!(record.header("ocpp_version"), Some("ocpp1.6"), "{action}");
        let value: Value = serde_json::from_str(record.value_str()).expect("JSON");
        assert_eq!(value, payload, "{action} is published as it was sent");
    }
    charger.finish(Duration::from_secs(10)).await;
}

/// Sends `raw`, expects the CALLERROR `[4, id, code, "<description...>", {}]`.
async fn expect_call_error(charger: &mut Charger, raw: &str, code: &str, description: &str) {
    charger.send_text(raw).await;
    let answer = charger.next_frame().await;
    assert_eq!(answer[0], 4, "{raw} → a CALLERROR: {answer}");
    assert_eq!(answer[2], code, "{raw} → {answer}");
    let told = answer[3].as_str().unwrap_or_default();
    assert!(told.starts_with(description), "{raw} → {answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_call_breaking_its_schema_gets_16s_call_error_and_the_connection_lives_on() {
    let cms = Cms::up().await;
    cms.add_charger("CP-SEC-EXT-BAD").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-SEC-EXT-BAD", "1.0.0").await;
    let cases = [
        (
            r#"[2,"b1","SignCertificate",{}]"#,
            "OccurenceConstraintViolation",
            "csr: required property is missing",
        ),
        (
            r#"[2,"b2","SecurityEventNotification",{"type":"X","timestamp":"yesterday"}]"#,
            "PropertyConstraintViolation",
            "timestamp: not an RFC 3339 date-time",
        ),
        (
            r#"[2,"b3","LogStatusNotification",{"status":"Uploaded","when":"now"}]"#,
            "FormationViolation",
            "unknown property \"when\"",
        ),
    ];
    for (raw, code, description) in cases {
        expect_call_error(&mut charger, raw, code, description).await;
        charger.heartbeat().await;
    }
    let answer = charger
        .call_result(
            "SignCertificate",
            json!({"csr": "-----BEGIN CERTIFICATE REQUEST-----"}),
        )
        .await;
    assert_eq!(answer, json!({"status": "Accepted"}));
    let api = Api::new(&cms, &cms.operator_token().await);
    let metrics = api.metrics().await;
    assert_eq!(
        metrics.sum(
            "cms_gateway_frames_in_total",
            &[("action", "SignCertificate")]
        ),
        Some(2.0),
        "the refused call and the accepted one"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_chargers_csr_is_signed_by_the_station_ca_sent_in_certificate_signed_and_renewed() {
    use crate::ocpp201::security::{station_ca, station_csr};
    let dir = tempfile::TempDir::new().unwrap();
    let (ca, ca_key) = station_ca(dir.path());
    // Certificates of a day, renewed 30 days before they end: renewed at once, once.
    let cms = Cms::up_with(&[
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
    let identity = "CP-SEC-EXT-SIGNED";
    let uuid = cms.add_charger(identity).await;
    let csr = dir.path().join("charger.csr");
    std::fs::write(&csr, station_csr(dir.path(), identity)).unwrap();
    let options = ["--csr", csr.to_str().expect("utf-8 path")];
    let mut charger = charge_point_with(&cms.ocpp_url(identity), identity, &options);
    // The 1.6 CertificateSigned: the chain alone (no certificateType, which 1.6 does not have).
    let signed = charger
        .wait_within(READY, "a CertificateSigned", |l| {
            l["received"] == "CertificateSigned"
        })
        .await;
    let chain = signed["payload"]["certificateChain"]
        .as_str()
        .unwrap_or_else(|| panic!("a chain: {signed}"));
    assert!(
        signed["payload"].get("certificateType").is_none(),
        "{signed}"
    );
    let pem = dir.path().join("signed.pem");
    std::fs::write(&pem, chain).unwrap();
    // Issued by the station CA, to the charger: checked by openssl, another stack than cms's.
    let verified = std::process::Command::new("openssl")
        .args(["verify", "-CAfile", &ca])
        .arg(&pem)
        .output()
        .expect("the openssl command line");
    assert!(
        verified.status.success(),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    let subject = std::process::Command::new("openssl")
        .args(["x509", "-noout", "-subject", "-in"])
        .arg(&pem)
        .output()
        .expect("the openssl command line");
    let subject = String::from_utf8_lossy(&subject.stdout).into_owned();
    assert!(subject.contains(&format!("CN = {identity}")), "{subject}");
    // About to end, it is renewed the 1.6 way: ExtendedTriggerMessage SignChargePointCertificate,
    // the charger's new CSR, a second CertificateSigned; both listed.
    let asked = charger
        .wait_within(READY, "the renewal asked", |l| {
            l["received"] == "ExtendedTriggerMessage"
        })
        .await;
    assert_eq!(
        asked["payload"]["requestedMessage"], "SignChargePointCertificate",
        "{asked}"
    );
    let deadline = Instant::now() + READY;
    while charger.lines_where("received", "CertificateSigned").len() < 2 {
        assert!(
            Instant::now() < deadline,
            "no second CertificateSigned: {}",
            charger.describe()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let api = Api::new(&cms, &cms.operator_token().await);
    let path = format!("/api/v3/chargers/{uuid}/certificates");
    crate::support::eventually("both certificates listed", async || {
        let listed = api.get_ok(&path).await;
        let two = listed["data"].as_array().map(Vec::len) == Some(2);
        two.then_some(()).ok_or(format!("{listed}"))
    })
    .await;
    charger.assert_nothing_unexpected();
}
