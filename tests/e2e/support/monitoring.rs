//! The metric names deploy/'s monitoring uses: every query of the Grafana dashboard and every
//! alert rule. Shared by the e2e suite (a fresh deployment exports each of them) and by
//! crates/cms/tests/deploy_monitoring.rs (some crate names each of them).

use std::path::{Path, PathBuf};

pub fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy")
}

/// The dashboard's panels, rows apart.
pub fn dashboard_panels() -> Vec<serde_json::Value> {
    let path = deploy().join("grafana/dashboards/cms-fleet.json");
    let dashboard: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the dashboard"))
            .expect("the dashboard is JSON");
    dashboard["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .filter(|panel| panel["type"] != "row")
        .cloned()
        .collect()
}

/// Every query of the dashboard's panels and the alert rules' file, one text.
pub fn queries() -> String {
    let mut queries = String::new();
    for panel in dashboard_panels() {
        for target in panel["targets"].as_array().expect("targets") {
            queries.push_str(target["expr"].as_str().expect("a query"));
            queries.push('\n');
        }
    }
    queries.push_str(
        &std::fs::read_to_string(deploy().join("prometheus/alerts.yml")).expect("the rules"),
    );
    queries
}

/// `cms_*` and `process_*` names in `text`, histogram series named by their metric, each once,
/// sorted.
pub fn metric_names(text: &str) -> Vec<String> {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut names = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let rest = &text[i..];
        let starts = (rest.starts_with("cms_") || rest.starts_with("process_"))
            && !text[..i].ends_with(is_name);
        if !starts {
            i += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let len = rest.find(|c: char| !is_name(c)).unwrap_or(rest.len());
        let name = &rest[..len];
        let name = ["_bucket", "_count", "_sum"]
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .unwrap_or(name);
        names.push(name.to_string());
        i += len;
    }
    names.sort();
    names.dedup();
    names
}

#[test]
fn finds_metric_names_in_queries() {
    let names = metric_names(
        "histogram_quantile(0.99, sum by (le) (rate(cms_x_seconds_bucket[5m]))) \
         / process_max_fds{job=~\"cms-.*\"} + xcms_not + cms_x_seconds_count",
    );
    assert_eq!(names, ["cms_x_seconds", "process_max_fds"]);
}
