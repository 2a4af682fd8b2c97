//! The monitoring of deploy/: Prometheus's configuration and alert rules pass `promtool check`,
//! the rules pass their unit tests (`promtool test rules`), and the Grafana dashboard and the
//! rules name only metrics cms exports.
//!
//! promtool comes with Debian's `prometheus` package (scripts/lib/promtool.sh installs it).
//! Without it the promtool test skips, saying so, except in CI (`CI=true`), where it fails.

#[path = "../../../tests/e2e/support/monitoring.rs"]
mod monitoring;

use monitoring::deploy;
use std::path::{Path, PathBuf};
use std::process::Command;

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0")
}

/// promtool from `PROMTOOL`, else from `PATH`.
fn promtool() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PROMTOOL") {
        return Some(PathBuf::from(path));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join("promtool"))
        .find(|path| path.is_file())
}

/// Runs promtool with `args` in deploy/prometheus; fails with its output when it fails.
fn run_promtool(promtool: &Path, args: &[&str]) {
    let output = Command::new(promtool)
        .args(args)
        .current_dir(deploy().join("prometheus"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", promtool.display()));
    assert!(
        output.status.success(),
        "promtool {} failed ({}):\n{}{}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn alert_rules_check_and_pass_their_unit_tests() {
    let Some(promtool) = promtool() else {
        assert!(
            !in_ci(),
            "promtool is missing (CI=true): install Debian's prometheus package \
             (scripts/lib/promtool.sh, run by scripts/test)"
        );
        eprintln!(
            "SKIPPED: promtool not found, so the alert rules are neither checked nor tested; \
             `apt-get install --no-install-recommends prometheus` provides it (scripts/test \
             installs it)"
        );
        return;
    };
    run_promtool(&promtool, &["check", "config", "prometheus.yml"]);
    run_promtool(&promtool, &["check", "rules", "alerts.yml"]);
    run_promtool(&promtool, &["test", "rules", "alerts_test.yml"]);
}

/// Every metric name the dashboard's queries and the alert rules use is one some crate exports:
/// a name changed in code, or misspelt here, would leave a panel empty and an alert silent.
/// (That a running deployment exports each one from its start is the e2e suite's `monitoring`.)
#[test]
fn dashboard_and_alerts_name_exported_metrics() {
    for panel in monitoring::dashboard_panels() {
        assert_eq!(
            panel["datasource"]["uid"], "prometheus",
            "panel {} is not on the provisioned data source",
            panel["title"]
        );
    }
    let provisioned =
        std::fs::read_to_string(deploy().join("grafana/provisioning/datasources/prometheus.yml"))
            .expect("the data source");
    assert!(provisioned.contains("uid: prometheus"), "{provisioned}");

    let mut source = String::new();
    read_sources(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join(".."),
        &mut source,
    );
    let missing: Vec<String> = monitoring::metric_names(&monitoring::queries())
        .into_iter()
        .filter(|name| !source.contains(&format!("\"{name}\"")))
        .collect();
    assert!(
        missing.is_empty(),
        "metrics the dashboard or the alerts use but no crate exports: {missing:?}"
    );
}

fn read_sources(dir: &Path, into: &mut String) {
    for entry in std::fs::read_dir(dir)
        .expect("a crates directory")
        .flatten()
    {
        let path = entry.path();
        if path.is_dir() {
            read_sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
}
