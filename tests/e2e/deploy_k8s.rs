//! The Kubernetes manifests (deploy/k8s) against the binary they run: every `CMS_` variable a
//! container sets (itself or through the ConfigMap) is one its subcommand reads, every address
//! it listens on is a port it declares, every probe points at the HTTP port and answers on a
//! real `cms gateway` and `cms api`, the grace period covers the drain, and `kubectl
//! kustomize` builds them where kubectl is installed.
//!
//! The manifests are read line by line (no YAML parser in the dependency tree for this); they
//! keep the one layout the reader below expects, which this test would notice losing.

use crate::support::broker::Broker;
use crate::support::fleet::Fleet;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

fn k8s_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deploy/k8s")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(k8s_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A container as the manifest declares it.
#[derive(Debug, Default)]
struct Container {
    file: &'static str,
    subcommand: String,
    /// Its variables, with their literal values where given.
    env: BTreeMap<String, Option<String>>,
    ports: BTreeMap<String, u16>,
    /// (path, port name)
    probes: Vec<(String, String)>,
    /// The `prometheus.io/port` annotation.
    scrape_port: Option<u16>,
    grace_seconds: u64,
}

impl Container {
    /// The address the probes and metrics are served on: the ops listener, else the HTTP one.
    fn probes_addr(&self) -> String {
        let ops = self.env.get("CMS_OPS_ADDR").cloned().flatten();
        ops.or_else(|| self.env["CMS_HTTP_ADDR"].clone())
            .expect("an address for the probes")
    }
}

fn value_of(line: &str, key: &str) -> Option<String> {
    let rest = line.trim().trim_start_matches("- ").strip_prefix(key)?;
    Some(rest.trim().trim_matches('"').to_string())
}

/// The ConfigMap's variables.
fn config() -> BTreeMap<String, Option<String>> {
    let text = read("config.yaml");
    let data = text.split("\ndata:\n").nth(1).expect("a data section");
    data.lines()
        .filter_map(|l| l.strip_prefix("  ")?.split_once(": "))
        .map(|(k, v)| (k.to_string(), Some(v.trim_matches('"').to_string())))
        .collect()
}

fn container(file: &'static str) -> Container {
    let text = read(file);
    let deployment = text.split("\n---\n").next().expect("the Deployment first");
    let lines: Vec<&str> = deployment.lines().collect();
    let mut c = Container {
        file,
        ..Container::default()
    };
    for (i, line) in lines.iter().enumerate() {
        let next = lines.get(i + 1).copied().unwrap_or("");
        if let Some(args) = value_of(line, "args:") {
            c.subcommand = args.trim_matches(|ch| "[]\"".contains(ch)).to_string();
        } else if let Some(name) = value_of(line, "name:").filter(|n| n.starts_with("CMS_")) {
            c.env.insert(name, value_of(next, "value:"));
        } else if let Some(port) = value_of(next, "containerPort:") {
            let name = value_of(line, "name:").expect("a named port");
            c.ports.insert(name, port.parse().expect("a port number"));
        } else if let Some(path) = value_of(line, "path:") {
            c.probes
                .push((path, value_of(next, "port:").expect("a probe port")));
        } else if let Some(port) = value_of(line, "prometheus.io/port:") {
            c.scrape_port = Some(port.parse().expect("a port number"));
        } else if let Some(grace) = value_of(line, "terminationGracePeriodSeconds:") {
            c.grace_seconds = grace.parse().expect("seconds");
        } else if value_of(line, "name:").as_deref() == Some("cms-config")
            && lines[i - 1].contains("configMapRef")
        {
            c.env.extend(config());
        }
    }
    assert!(!c.subcommand.is_empty(), "{file}: no args");
    c
}

fn help(subcommand: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_cms"))
        .args([subcommand, "--help"])
        .output()
        .expect("run cms --help");
    assert!(out.status.success(), "cms {subcommand} --help failed");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn seconds(duration: &str) -> u64 {
    let (n, unit) = duration.split_at(duration.len() - 1);
    let n: u64 = n.parse().expect("a number");
    match unit {
        "s" => n,
        "m" => n * 60,
        other => panic!("unit {other:?}"),
    }
}

#[test]
fn every_variable_port_and_grace_in_the_manifests_is_one_the_binary_has() {
    for file in ["gateway.yaml", "api.yaml"] {
        let c = container(file);
        let help = help(&c.subcommand);
        for name in c.env.keys() {
            // A secret's value is hidden: `[env: NAME]` rather than `[env: NAME=value]`.
            assert!(
                help.contains(&format!("[env: {name}="))
                    || help.contains(&format!("[env: {name}]")),
                "{file}: `cms {}` reads no {name}",
                c.subcommand
            );
        }
        // Every address it listens on is a port it declares.
        for (name, value) in &c.env {
            let Some(addr) = value.as_deref().filter(|_| name.ends_with("_ADDR")) else {
                continue;
            };
            let port: u16 = addr.rsplit(':').next().unwrap().parse().expect("a port");
            assert!(
                c.ports.values().any(|&p| p == port),
                "{file}: {name}={addr} but no containerPort {port}"
            );
        }
        // Probes and Prometheus go to the probes' listener.
        let probes = c.probes_addr();
        assert!(!c.probes.is_empty(), "{file}: no probes");
        for (path, port) in &c.probes {
            let declared = c
                .ports
                .get(port)
                .unwrap_or_else(|| panic!("{file}: port {port}"));
            assert!(
                probes.ends_with(&format!(":{declared}")),
                "{file}: {path} on {port}, not on {probes}"
            );
        }
        let scrape = c.scrape_port.expect("a prometheus.io/port annotation");
        assert!(
            probes.ends_with(&format!(":{scrape}")),
            "{file}: Prometheus scrapes {scrape}, not {probes}"
        );
        // The grace period covers the drain and a flush.
        if let Some(Some(drain)) = c.env.get("CMS_DRAIN_PERIOD") {
            assert!(
                c.grace_seconds > seconds(drain) + 10,
                "{file}: grace {}",
                c.grace_seconds
            );
        }
    }
    // The Services send to ports the Deployments name.
    let gateway = container("gateway.yaml");
    let api = container("api.yaml");
    for (file, c) in [("gateway-service.yaml", &gateway), ("api.yaml", &api)] {
        for line in read(file).lines() {
            if let Some(target) = value_of(line, "targetPort:") {
                assert!(c.ports.contains_key(&target), "{file}: targetPort {target}");
            }
        }
    }
}

#[test]
fn kubectl_kustomize_builds_the_manifests_where_kubectl_is() {
    let Ok(out) = Command::new("kubectl")
        .args(["kustomize", &k8s_dir().display().to_string()])
        .output()
    else {
        eprintln!("kubectl is not installed: `kubectl kustomize deploy/k8s` not tried");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for kind in [
        "kind: ConfigMap",
        "kind: Secret",
        "kind: Deployment",
        "kind: Service",
        "kind: PodDisruptionBudget",
    ] {
        assert!(text.contains(kind), "no {kind} in:\n{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_probe_paths_answer_on_a_real_gateway_and_api() {
    let broker = Broker::shared().await;
    let ops = ["--ops-addr", "127.0.0.1:0"];
    let fleet = Fleet::start_with_api(&broker.brokers, &["gw-probe"], &ops, &ops).await;
    let client = reqwest::Client::builder().no_proxy().build().unwrap();
    let gateway = fleet.gateway("gw-probe");
    let api_ops = fleet.api_ops_base.clone().expect("the API's ops listener");
    let gateway_ops = gateway
        .probes_base
        .clone()
        .expect("the gateway's ops listener");
    let on = |c: &Container, http: &str, ops: &str| match c.env.contains_key("CMS_OPS_ADDR") {
        true => ops.to_string(),
        false => http.to_string(),
    };
    // As Kubernetes does before it routes to a pod: the API is ready once it read its topics.
    crate::support::fleet::wait_ready_at("the API", &api_ops).await;
    let (gateway_yaml, api_yaml) = (container("gateway.yaml"), container("api.yaml"));
    let gateway_base = on(&gateway_yaml, &gateway.ops_base, &gateway_ops);
    let api_base = on(&api_yaml, &fleet.rest_base, &api_ops);
    for (c, base) in [(gateway_yaml, gateway_base), (api_yaml, api_base)] {
        // Prometheus scrapes where the probes go.
        let mut paths: Vec<&str> = c.probes.iter().map(|(path, _)| path.as_str()).collect();
        paths.push("/metrics");
        for path in paths {
            let status = client
                .get(format!("{base}{path}"))
                .send()
                .await
                .expect("probe")
                .status();
            assert!(status.is_success(), "{}: {path} answered {status}", c.file);
        }
    }
    // Every ops listener serves the three; the REST listener beside one keeps /healthz alone.
    for base in [&api_ops, &gateway_ops] {
        for path in ["/healthz", "/readyz", "/metrics"] {
            let status = client.get(format!("{base}{path}")).send().await.unwrap();
            assert_eq!(status.status(), 200, "{base}{path}");
        }
    }
    let rest = |path: &str| client.get(format!("{}{path}", fleet.rest_base)).send();
    assert_eq!(rest("/healthz").await.unwrap().status(), 200);
    assert_eq!(rest("/metrics").await.unwrap().status(), 404);
}
