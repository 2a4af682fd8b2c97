//! Smart charging, simulated: ten EV charge points and a grid meter share a 100 A grid
//! connection under cms's dynamic load balancing, on the real clock (about 50 s). The charge
//! points are the Python `ocpp` package's, all in one process (tests/interop/smart_charging_sim.py):
//! cars arrive, the base load steps up, cars leave, the base load drops, the meter goes quiet and
//! comes back. The script checks every 250 ms what the chargers were told against the balancer's
//! rules (the scenario and its arithmetic are in its docstring) and prints a summary; this test
//! then reads cms's status endpoint while the chargers are still charging.
//!
//! The plot: the script draws the run as a PNG (tests/interop/png_plot.py, standard library
//! only) in the test's temporary directory. With `CMS_SMART_CHARGING_PLOT=PATH` the test copies
//! it to PATH (relative to the repository's root), passed or not; that is how the picture in
//! docs/smart-charging.md is made:
//!
//! ```text
//! CMS_SMART_CHARGING_PLOT=docs/img/smart-charging.png CARGO_INCREMENTAL=0 \
//!     cargo nextest run --locked --test e2e smart_charging
//! ```
//!
//! Needs python3 with the packages of tests/interop/requirements.txt (scripts/test installs
//! them). Without them the test fails, never skips.

use crate::support::python::python3;
use crate::support::python_script::PythonScript;
use crate::support::rest::{operators_site, team_of_type};
use crate::support::{Api, Cms};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tempfile::TempDir;

/// The script plays about 50 s after its chargers booted; this is the backstop.
const SIMULATION_LIMIT: Duration = Duration::from_secs(100);
/// How long the import check of the Python packages may take.
const IMPORT_TIMEOUT: Duration = Duration::from_secs(20);
const METER: &str = "SC-METER";
/// Ten EV chargers; the last two have 10 A connectors (and cars), the rest 32 A.
const EVS: usize = 10;
const SMALL_CONNECTOR_AMPS: i64 = 10;
const CONNECTOR_AMPS: i64 = 32;
/// How far a figure cms computed from readings may be from the simulation's own.
const CLOSE: f64 = 1.0;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn interop_dir() -> PathBuf {
    repository().join("tests/interop")
}

fn ev_identity(n: usize) -> String {
    format!("SC-EV-{n:02}")
}

/// The connector's max_amperage as told to cms, and what its car takes at most.
fn connector_amps(n: usize) -> i64 {
    if n > EVS - 2 {
        SMALL_CONNECTOR_AMPS
    } else {
        CONNECTOR_AMPS
    }
}

fn password(identity: &str) -> String {
    format!("sim-password-{identity}")
}

/// Fails the test unless `python3` can import the interop packages; never skips.
async fn require_python_packages() {
    let check = "import ocpp, websockets";
    let remedy = "they are in tests/interop/requirements.txt (scripts/test installs them)";
    match python3(&["-c", check], IMPORT_TIMEOUT).await {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "python3 lacks the packages ocpp and websockets: {remedy}\n{}",
            out.stderr.trim()
        ),
        Err(why) => panic!("{why}\nthis test needs python3 with ocpp and websockets: {remedy}"),
    }
}

/// Registers the meter's charger and the ten EV chargers (security profile 1, with passwords)
/// in the operators' default site; returns (identity, uuid) in that order.
async fn register_chargers(cms: &Cms, dir: &Path) -> Vec<(String, String)> {
    let identities: Vec<String> = std::iter::once(METER.to_string())
        .chain((1..=EVS).map(ev_identity))
        .collect();
    let lines: Vec<String> = identities
        .iter()
        .map(|identity| format!("{identity},{}", password(identity)))
        .collect();
    let file = dir.join("chargers.txt");
    std::fs::write(&file, lines.join("\n")).expect("write the chargers' file");
    let file = file.to_str().expect("a utf-8 path");
    let out = cms
        .cli(&[
            "charger",
            "import",
            "--file",
            file,
            "--security-profile",
            "1",
        ])
        .await;
    assert!(out.status.success(), "charger import: {}", out.stderr);
    // Load management is a `smart` feature.
    for identity in identities.iter().filter(|i| *i != METER) {
        cms.license(identity, true, false).await;
    }
    let mut registered = Vec::new();
    for line in out.stdout.lines() {
        let mut words = line.split_whitespace();
        if let (Some(uuid), Some(identity)) = (words.next(), words.next()) {
            registered.push((identity.to_string(), uuid.to_string()));
        }
    }
    let listed: Vec<&str> = registered.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(
        listed, identities,
        "charger import printed:\n{}",
        out.stdout
    );
    for identity in &identities {
        cms.wait_until_known(identity).await;
    }
    registered
}

fn amps(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: a number, not {value}"))
}

fn assert_close(seen: f64, expected: f64, within: f64, what: &str) {
    assert!(
        (seen - expected).abs() <= within,
        "{what}: {seen} A, expected {expected} A (within {within} A)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_chargers_share_a_grid_connection_measured_by_a_ct_meter() {
    simulate(&[], "CMS_SMART_CHARGING_PLOT").await;
}

/// The simulation with the chargers numbered in `v201` as OCPP 2.0.1 stations
/// (tests/interop/ocpp201_smart.py) and the others 1.6 charge points, under the same
/// assertions; the plot copied to the path `plot_var` names, when set.
pub(crate) async fn simulate(v201: &[usize], plot_var: &str) {
    require_python_packages().await;
    let cms = Cms::up().await;
    let work = TempDir::new().expect("a temporary directory");
    let chargers = register_chargers(&cms, work.path()).await;
    let uuid_of = |identity: &str| {
        let found = chargers.iter().find(|(i, _)| i == identity);
        found.expect("a registered charger").1.clone()
    };
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);
    let site = operators_site(&api).await;

    // The CT meter on the meter's charger: its Inlet readings on connector 0 are the grid's.
    let team = team_of_type(&api, "operators").await["id"].clone();
    let meter_charger = uuid_of(METER);
    let meter_charger_id = api.charger(&meter_charger).await.expect("listed")["id"].clone();
    let body = json!({"type": "ct_meter", "charger_id": meter_charger_id});
    let path = format!("/api/v2/teams/{team}/meters");
    let meter = api.expect(201, "POST", &path, Some(&body)).await["data"].clone();
    let meter_uuid = meter["uuid"]
        .as_str()
        .expect("the meter's uuid")
        .to_string();

    // The connectors' ratings, which the balancer caps a share at.
    for n in 1..=EVS {
        let path = format!("/api/v3/chargers/{}/connectors/1", uuid_of(&ev_identity(n)));
        let body = json!({"phase_rotation": "RST", "max_amperage": connector_amps(n)});
        let answer = api.put(&path, &body).await;
        assert_eq!(answer.status, 200, "PUT {path}: {}", answer.body);
    }

    let settings = json!({
        "mode": "dynamic", "grid_limit_amps": 100, "meter_uuid": meter_uuid,
        "strategy": "equal", "min_amps": 6, "safety_margin_amps": 4, "fail_safe_amps": 8,
        "meter_timeout_seconds": 5,
    });
    let settings_path = format!("/api/v3/sites/{site}/smart-charging");
    let answer = api.put(&settings_path, &settings).await;
    assert!(
        (200..300).contains(&answer.status),
        "PUT {settings_path} answered {}: {}",
        answer.status,
        answer.body
    );

    let setup = json!({
        "settings": settings,
        "meter": {"identity": METER, "password": password(METER)},
        "chargers": (1..=EVS).map(|n| {
            let identity = ev_identity(n);
            let ocpp = if v201.contains(&n) { "2.0.1" } else { "1.6" };
            json!({
                "identity": identity, "password": password(&identity),
                "car_max_amps": connector_amps(n), "connector_max_amps": connector_amps(n),
                "ocpp": ocpp,
            })
        }).collect::<Vec<_>>(),
    });
    let setup_path = work.path().join("setup.json");
    std::fs::write(&setup_path, setup.to_string()).expect("write setup.json");
    let out = work.path().join("out");
    let ws_base = cms.ocpp_url("");
    let rest = cms.http_url("");
    let args = [
        "--ws-url",
        &ws_base,
        "--setup",
        setup_path.to_str().expect("a utf-8 path"),
        "--out",
        out.to_str().expect("a utf-8 path"),
        "--rest-url",
        &rest,
        "--token",
        &token,
        "--site",
        &site,
        "--hold",
    ];
    let script = interop_dir().join("smart_charging_sim.py");
    let mut sim = PythonScript::start(
        "the smart-charging simulation".to_string(),
        &script,
        &args,
        "the smart-charging simulation and its plot",
    );
    let line = sim
        .wait_within(SIMULATION_LIMIT, "its summary", |l| {
            l.get("summary").is_some()
        })
        .await;
    let summary = &line["summary"];
    if let Some(target) = std::env::var_os(plot_var) {
        // Tests run in the crate's directory: a relative path is taken from the repository's.
        let target = repository().join(target);
        let png = out.join("smart-charging.png");
        std::fs::copy(&png, &target).unwrap_or_else(|e| {
            panic!("copy {} to {}: {e}", png.display(), target.display());
        });
        eprintln!("the plot is at {}", target.display());
    }
    let failures: Vec<&str> = summary["failures"]
        .as_array()
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    assert!(
        summary["ok"] == true,
        "the simulation's checks failed:\n  {}\nsummary: {summary}\nstderr:\n{}",
        failures.join("\n  "),
        sim.stderr()
    );

    // What the simulation saw, phase by phase (tests/interop/smart_charging_sim.py has the
    // arithmetic): 76 A for ten cars, then 41 A for six with four paused, the paused ones
    // served first after four served cars left, two connectors at their 10 A cap, the
    // fail-safe while the meter was quiet.
    let phases = &summary["phases"];
    let counts = |phase: &str| {
        let p = &phases[phase];
        (p["served"].as_u64(), p["paused"].as_u64())
    };
    assert_eq!(counts("arrivals"), (Some(10), Some(0)), "{phases}");
    assert_eq!(counts("base load step"), (Some(6), Some(4)), "{phases}");
    assert_eq!(counts("departures"), (Some(6), Some(0)), "{phases}");
    assert_eq!(counts("base load drop"), (Some(6), Some(0)), "{phases}");
    assert_eq!(counts("meter returns"), (Some(6), Some(0)), "{phases}");
    let small: Vec<String> = (EVS - 1..=EVS).map(ev_identity).collect();
    assert_eq!(phases["base load drop"]["capped"], json!(small), "{phases}");
    let paused_before = summary["paused_before_departures"]
        .as_array()
        .map_or(0, Vec::len);
    assert_eq!(paused_before, 4, "{summary}");
    let fail_safe_limits = phases["fail-safe"]["limits"].as_object().expect("limits");
    assert_eq!(fail_safe_limits.len(), 6, "{phases}");
    for (identity, limit) in fail_safe_limits {
        assert_eq!(limit.as_f64(), Some(8.0), "{identity} in the fail-safe");
    }
    let transitions = &summary["rest"]["transitions"];
    let states: Vec<&str> = transitions
        .as_array()
        .expect("the status endpoint's states")
        .iter()
        .filter_map(|t| t[1].as_str())
        .collect();
    let back = states
        .iter()
        .position(|s| *s == "fail_safe")
        .and_then(|at| states[at..].iter().position(|s| *s == "balancing"));
    assert!(back.is_some(), "fail_safe, then balancing: {transitions}");

    // cms's own account, while the six cars still charge and the meter still sends.
    let last = &summary["final"];
    let grid = amps(&last["grid_phases"]["L1"], "the grid's L1");
    let status_path = format!("/api/v3/sites/{site}/smart-charging/status");
    let status = api.get_ok(&status_path).await;
    let data = &status["data"];
    assert_eq!(data["state"], "balancing", "{status}");
    let meter = &data["meter"];
    assert_close(amps(&meter["amps"], "the meter"), grid, CLOSE, "the meter");
    for phase in ["L1", "L2", "L3"] {
        let expected = amps(&last["grid_phases"][phase], phase);
        let what = format!("the meter's {phase}: {meter}");
        assert_close(amps(&meter["phases"][phase], &what), expected, CLOSE, &what);
    }
    assert!(meter["measured_at"].is_string(), "{meter}");
    assert_close(
        amps(&data["base_load_amps"], "base_load_amps"),
        amps(&last["base_load_amps"], "the base load"),
        CLOSE,
        "base_load_amps",
    );
    // 100 A - 4 A margin - 20 A base load.
    assert_close(
        amps(&data["available_amps"], "available_amps"),
        76.0,
        CLOSE,
        "available_amps",
    );
    // 10 + 10 + 4 x 14.
    assert_close(
        amps(&data["allocated_amps"], "allocated_amps"),
        76.0,
        CLOSE,
        "allocated_amps",
    );
    // Under the grid limit: 100 A less the meter's highest phase.
    assert_close(
        amps(&data["headroom_amps"], "headroom_amps"),
        100.0 - grid,
        CLOSE,
        "headroom_amps",
    );
    assert!(data["fail_safe_since"].is_null(), "{status}");

    let rows = data["connectors"].as_array().expect("a connectors array");
    let row = |identity: &str, connector: i64| {
        rows.iter()
            .find(|r| r["identity"] == identity && r["connector_id"] == connector)
            .unwrap_or_else(|| panic!("no row for {identity} connector {connector}: {status}"))
    };
    let charging = last["connectors"].as_object().expect("the charging cars");
    assert_eq!(charging.len(), 6, "{last}");
    for (identity, held) in charging {
        let r = row(identity, 1);
        let what = format!("{identity}'s TxProfile: {r}");
        assert_eq!(r["charger_uuid"], uuid_of(identity), "{what}");
        assert_eq!(r["purpose"], "TxProfile", "{what}");
        if held["transaction_id"].is_string() {
            // A 2.0.1 station's own id; the status shows the store's number for it.
            assert!(r["transaction_id"].is_i64(), "{what}");
        } else {
            assert_eq!(r["transaction_id"], held["transaction_id"], "{what}");
        }
        assert_eq!(r["status"], "accepted", "{what}");
        assert_eq!(r["paused"], false, "{what}");
        assert!(r["answered_at"].is_string(), "{what}");
        let limit = amps(&held["limit_amps"], "the limit the charger holds");
        assert_close(amps(&r["limit_amps"], &what), limit, 0.05, &what);
        // The 10 A connectors at their cap, the four others (76 - 2 x 10) / 4.
        let cap = amps(&held["connector_max_amps"], "the connector's max");
        let expected = if cap < 14.0 { cap } else { 14.0 };
        assert_close(limit, expected, CLOSE, &what);
        let drawn = amps(&held["draw_amps"], "what the car draws");
        assert_close(amps(&r["measured_amps"], &what), drawn, CLOSE, &what);
    }
    for n in 1..=EVS {
        let identity = ev_identity(n);
        let r = row(&identity, 0);
        let what = format!("{identity}'s TxDefaultProfile: {r}");
        assert_eq!(r["purpose"], "TxDefaultProfile", "{what}");
        assert_eq!(r["status"], "accepted", "{what}");
        assert_close(amps(&r["limit_amps"], &what), 8.0, 0.05, &what);
        assert_eq!(last["default_limits"][&identity], 8.0, "{last}");
    }

    // The CT meter's readings, as its charger's connector 0 shows them.
    let reading = api.latest_meter_value(&meter_charger, 0).await;
    assert_eq!(reading.status, 200, "{}", reading.body);
    let sampled = reading.json["meterValue"][0]["sampledValue"]
        .as_array()
        .expect("sampled values");
    for phase in ["L1", "L2", "L3"] {
        let value = sampled
            .iter()
            .find(|v| v["phase"] == phase && v["measurand"] == "Current.Import")
            .unwrap_or_else(|| panic!("no {phase} current: {}", reading.body));
        assert_eq!(value["location"], "Inlet", "{value}");
        let seen: f64 = value["value"]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("a number: {value}"));
        let expected = amps(&last["grid_phases"][phase], phase);
        assert_close(seen, expected, CLOSE, &format!("the meter's {phase}"));
    }

    // What each 2.0.1 station told at its car's arrival (ocpp201_smart.py), as the API shows
    // it: the EMS limit on EVSE 1 at the connector's rating, and the EV's needs.
    for &n in v201 {
        let identity = ev_identity(n);
        let path = format!("/api/v3/chargers/{}/charging-limits", uuid_of(&identity));
        let shown = api.get_ok(&path).await;
        let data = &shown["data"];
        assert_eq!(data["identity"], identity.as_str(), "{shown}");
        let limits = data["external_limits"].as_array().expect("external_limits");
        assert_eq!(limits.len(), 1, "{shown}");
        assert_eq!(limits[0]["evse_id"], 1, "{shown}");
        assert_eq!(limits[0]["source"], "EMS", "{shown}");
        assert_eq!(limits[0]["grid_critical"], false, "{shown}");
        let rating = connector_amps(n) as f64;
        assert_eq!(limits[0]["limit_amps"].as_f64(), Some(rating), "{shown}");
        let period = &limits[0]["charging_schedule"][0]["chargingSchedulePeriod"][0];
        assert_eq!(period["limit"].as_f64(), Some(rating), "{shown}");
        let needs = data["ev_charging_needs"]
            .as_array()
            .expect("ev_charging_needs");
        assert_eq!(needs.len(), 1, "{shown}");
        let ac = &needs[0]["charging_needs"]["acChargingParameters"];
        assert_eq!(needs[0]["evse_id"], 1, "{shown}");
        assert_eq!(ac["evMaxCurrent"].as_f64(), Some(rating), "{shown}");
        assert!(needs[0]["needs_at"].is_string(), "{shown}");
    }
    sim.finish().await;

    // What an SRE sees: the limits and their answers, the fail-safe time, the headroom.
    let metrics = api.metrics().await;
    let limits = |outcome: &str| {
        metrics
            .sum("cms_smart_charging_limits_total", &[("outcome", outcome)])
            .unwrap_or(0.0)
    };
    assert!(limits("sent") >= 30.0, "{}", limits("sent"));
    // Every limit answered was accepted (a last one may still be on its way).
    assert!(
        limits("accepted") >= limits("sent") - 2.0,
        "{}",
        limits("accepted")
    );
    assert_eq!(limits("rejected") + limits("failed"), 0.0);
    let fail_safe = metrics
        .sum("cms_smart_charging_fail_safe_seconds_total", &[])
        .unwrap_or(0.0);
    assert!(
        (3.0..=12.0).contains(&fail_safe),
        "fail-safe for {fail_safe} s"
    );
    let headroom = metrics.sum("cms_smart_charging_headroom_amps", &[("site", &site)]);
    assert_close(
        headroom.expect("the site's headroom"),
        amps(&data["headroom_amps"], "the headroom"),
        CLOSE * 3.0,
        "the headroom metric",
    );
}
