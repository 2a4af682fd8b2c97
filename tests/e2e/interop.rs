//! Interoperability: a third-party charge point, the Python `ocpp` package (which validates every
//! CALL and CALLRESULT against the official OCPP 1.6 JSON schemas), talks to cms from boot to
//! stop transaction; then the REST API shows what it sent.
//!
//! Needs `python3` with the packages of tests/interop/requirements.txt (scripts/test installs
//! them). Without them the test fails, never skips.

use crate::support::python::python3;
use crate::support::{Api, Cms, assert_record_time};
use std::path::PathBuf;
use std::time::Duration;

/// The script bounds itself to about 20 s; this is the backstop.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(40);
/// How long the import check of the Python packages may take.
const IMPORT_TIMEOUT: Duration = Duration::from_secs(20);

fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop")
}

/// Fails the test unless `python3` can import the interop packages; never skips, in CI or not.
async fn require_python_packages() {
    let requirements = interop_dir().join("requirements.txt");
    let remedy = if std::env::var_os("CI").is_some() {
        format!(
            "CI is set: the machine must have them (scripts/test installs them from {})",
            requirements.display()
        )
    } else {
        "run `pip install -r tests/interop/requirements.txt` (scripts/test does it)".to_string()
    };
    let check = "import importlib.metadata as m, ocpp, websockets; \
                 print('ocpp', m.version('ocpp'), 'websockets', m.version('websockets'))";
    match python3(&["-c", check], IMPORT_TIMEOUT).await {
        Ok(out) if out.status.success() => eprintln!("interop with {}", out.stdout.trim()),
        Ok(out) => panic!(
            "python3 lacks the interop packages ocpp and websockets: {remedy}\n{}",
            out.stderr.trim()
        ),
        Err(why) => {
            panic!("{why}\nthe interop test needs python3 with ocpp and websockets: {remedy}")
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_ocpp_library_charge_point_interoperates() {
    require_python_packages().await;
    let cms = Cms::up().await;
    let identity = "CP-INTEROP-PY";
    let uuid = cms.add_charger(identity).await;
    let api = Api::new(&cms, &cms.operator_token().await);

    let script = interop_dir().join("ocpp16_charge_point.py");
    let script = script.to_str().expect("utf-8 path");
    let url = cms.ocpp_url(identity);
    let run = python3(&[script, &url, identity], SCRIPT_TIMEOUT)
        .await
        .unwrap_or_else(|why| panic!("{why}"));
    eprintln!("{}", run.stdout);
    assert!(
        run.status.success(),
        "the ocpp charge point failed ({}):\nstdout:\n{}\nstderr:\n{}",
        run.status,
        run.stdout,
        run.stderr
    );
    let transaction_id: i64 = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("transactionId="))
        .and_then(|id| id.trim().parse().ok())
        .unwrap_or_else(|| panic!("the script printed no transactionId:\n{}", run.stdout));
    assert!(transaction_id > 0, "transactionId {transaction_id}");

    // The script closed its websocket before exiting: the charger is offline, with the
    // firmware its BootNotification reported and the status of its connector 0.
    let seen = api
        .wait_for_charger(&uuid, "firmware 9.9.9, offline", |c| {
            c["firmware_version"] == "9.9.9" && c["connection_status"] == "offline"
        })
        .await;
    assert_eq!(seen["status"], "Available", "{seen}");
    assert_eq!(seen["error"], "NoError", "{seen}");
    for at in [
        "last_connection_at",
        "last_disconnection_at",
        "last_heartbeat_at",
    ] {
        assert_record_time(&seen[at], at);
    }

    // The last MeterValues it sent (in the transaction, sampled 2026-06-01T12:05:00+02:00), in
    // UTC and with the OCPP defaults filled in.
    let expected = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-06-01T10:05:00Z","sampledValue":[
        {"value":"1500","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"},
        {"value":"31.9","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L1","location":"Outlet","unit":"A"},
        {"value":"32.0","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L2","location":"Outlet","unit":"A"},
        {"value":"31.8","context":"Sample.Periodic","format":"Raw","measurand":"Current.Import","phase":"L3","location":"Outlet","unit":"A"},
        {"value":"229.8","context":"Sample.Periodic","format":"Raw","measurand":"Voltage","phase":"L1-N","location":"Outlet","unit":"V"}
    ]}]}"#;
    api.wait_for_latest_meter_value(&uuid, 1, expected).await;
}
