//! A fleet on Kafka: one `cms api` and any number of `cms gateway`s, all on one broker and one
//! topic prefix of their own; plus the admin commands against the API's store, a REST client,
//! and registry propagation measured without leaving a trace. As deployed, the API keeps its
//! store in PostgreSQL (a fresh schema on the test server); without a test server (outside CI),
//! in SQLite in a temporary data dir.

pub use super::cms::is_uuid;

use super::cms::CliOutput;
use super::process::{CmsProcess, run_cli};
use super::station::{Refused, probe};
use super::{Api, POLL_EVERY, REPLY_TIMEOUT};
use futures_util::future::join_all;
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// Partitions of the fleet's topics: a few, so a key's partition is not trivially 0, without
/// loading the shared broker with sixteen per topic per test.
const PARTITIONS: &str = "4";
/// How long an admin command may take.
const CLI_TIMEOUT: Duration = Duration::from_secs(15);

pub struct Gateway {
    pub node_id: String,
    /// `127.0.0.1:PORT` of its OCPP listener.
    pub ocpp_addr: String,
    /// `http://127.0.0.1:PORT` of /healthz, /readyz and /metrics.
    pub ops_base: String,
    /// `http://127.0.0.1:PORT` of its second probes and metrics listener, with `--ops-addr`.
    pub probes_base: Option<String>,
    pub process: CmsProcess,
}

/// What `cms api` and `cms gateway` print once their `--ops-addr` listener serves.
const OPS_LINE: &str = "cms: serving probes and metrics on http://";

pub struct Fleet {
    pub brokers: String,
    /// The `--topic-prefix` of every process of this fleet.
    pub prefix: String,
    /// `http://127.0.0.1:PORT` of the API's REST listener.
    pub rest_base: String,
    /// `http://127.0.0.1:PORT` of the API's probes and metrics listener, with `--ops-addr`.
    pub api_ops_base: Option<String>,
    pub gateways: Vec<Gateway>,
    pub api: CmsProcess,
    /// More `cms api`s beside the first, on the same store and topics ([`Fleet::add_api_replica`]).
    pub api_replicas: Vec<CmsProcess>,
    /// The arguments of every `cms api` of this fleet.
    api_args: Vec<String>,
    /// How `cms` finds the API's store: `--database-url URL` or `--data-dir DIR`.
    store: Vec<String>,
    // Dropped after the processes (fields drop in order): the store outlives its users.
    _data: TempDir,
    logs: TempDir,
}

/// A topic prefix no other test or earlier run on the same broker uses.
pub fn unique_prefix() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_nanos();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("t{:x}{:x}{n}", std::process::id(), nanos % (1 << 40))
}

impl Fleet {
    /// Starts the API and one gateway per node id, all at once, and waits until every gateway
    /// answers /readyz 200 (its registry is loaded).
    pub async fn start(brokers: &str, node_ids: &[&str]) -> Fleet {
        Fleet::start_with(brokers, node_ids, &[]).await
    }

    /// [`Fleet::start`] with `gateway_args` added to every `cms gateway`.
    pub async fn start_with(brokers: &str, node_ids: &[&str], gateway_args: &[&str]) -> Fleet {
        Fleet::start_with_api(brokers, node_ids, gateway_args, &[]).await
    }

    /// [`Fleet::start_with`], and `api_args` added to every `cms api`.
    pub async fn start_with_api(
        brokers: &str,
        node_ids: &[&str],
        gateway_args: &[&str],
        api_args: &[&str],
    ) -> Fleet {
        let prefix = unique_prefix();
        let data = TempDir::new().expect("temp data dir");
        let logs = TempDir::new().expect("temp log dir");
        let started = Instant::now();
        let store = match cms_store::testing::postgres_url() {
            Some(server) => {
                let url = cms_store::testing::fresh_schema(&server)
                    .await
                    .expect("create a schema on the test PostgreSQL server");
                vec!["--database-url".to_string(), url]
            }
            None => vec!["--data-dir".to_string(), data.path().display().to_string()],
        };
        let api_args: Vec<String> = [
            "api",
            "--kafka-brokers",
            brokers,
            "--kafka-partitions",
            PARTITIONS,
            "--topic-prefix",
            &prefix,
            "--http-addr",
            "127.0.0.1:0",
        ]
        .iter()
        .chain(api_args)
        .map(|s| s.to_string())
        .chain(store.iter().cloned())
        .collect();
        let api_log = logs.path().join("api.log");
        let ready: &[&str] = match api_args.iter().any(|a| a == "--ops-addr") {
            true => &["cms: serving REST on ", OPS_LINE],
            false => &["cms: serving REST on "],
        };
        let api = CmsProcess::start("cms api", &api_args, &api_log, ready);
        let gateways = node_ids
            .iter()
            .map(|node| start_gateway(brokers, &prefix, node, &logs, gateway_args));
        let (api, gateways) = tokio::join!(api, join_all(gateways));
        let (api, lines) = api;
        let fleet = Fleet {
            brokers: brokers.to_string(),
            rest_base: lines[0].trim_end_matches('/').to_string(),
            api_ops_base: lines
                .get(1)
                .map(|l| format!("http://{}", l.trim_end_matches('/'))),
            prefix,
            gateways,
            api,
            api_replicas: Vec::new(),
            api_args,
            store,
            _data: data,
            logs,
        };
        for gateway in &fleet.gateways {
            wait_ready(gateway).await;
        }
        eprintln!(
            "fleet {} (api + {:?}) ready in {:?}",
            fleet.prefix,
            node_ids,
            started.elapsed()
        );
        fleet
    }

    pub fn gateway(&self, node_id: &str) -> &Gateway {
        self.gateways
            .iter()
            .find(|g| g.node_id == node_id)
            .unwrap_or_else(|| panic!("no gateway {node_id} in this fleet"))
    }

    pub fn gateway_mut(&mut self, node_id: &str) -> &mut Gateway {
        self.gateways
            .iter_mut()
            .find(|g| g.node_id == node_id)
            .unwrap_or_else(|| panic!("no gateway {node_id} in this fleet"))
    }

    pub fn messages_topic(&self) -> String {
        format!("{}.ocpp.messages", self.prefix)
    }

    pub fn connections_topic(&self) -> String {
        format!("{}.ocpp.connections", self.prefix)
    }

    /// Runs `cms <args>` on the API's store to completion (bounded).
    pub async fn cli(&self, args: &[&str]) -> CliOutput {
        run_cli(&self.store, args, CLI_TIMEOUT).await
    }

    /// The API's store, opened beside it: for writing rows no REST endpoint writes yet.
    pub async fn open_store(&self) -> cms_store::Store {
        let opened = match self.store[0].as_str() {
            "--data-dir" => cms_store::Store::open(std::path::Path::new(&self.store[1])).await,
            _ => cms_store::Store::open_url(&self.store[1]).await,
        };
        opened.expect("open the fleet's store")
    }

    /// Runs `sql` on the API's store: for a change no endpoint makes (a charger moved to
    /// another site).
    pub async fn execute_sql(&self, sql: &str) {
        let url = match self.store[0].as_str() {
            "--data-dir" => format!("sqlite://{}/cms.sqlite3", self.store[1]),
            _ => self.store[1].clone(),
        };
        cms_store::testing::execute(&url, sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// A new personal access token of `email` (a customer outside the Operators team, created
    /// when new), with every scope.
    pub async fn guest_token(&self, email: &str) -> String {
        let args = [
            "token", "create", "--email", email, "--name", "Guest", "--guest",
        ];
        let out = self.cli(&args).await;
        assert!(out.status.success(), "token create --guest: {}", out.stderr);
        out.last_line().to_string()
    }

    /// `cms charger licenses ID --smart S --pro P` on the API's store.
    pub async fn license(&self, identity: &str, smart: bool, pro: bool) {
        super::cms::license_with(&self.store, identity, smart, pro).await;
    }

    /// `cms charger add --identity ID` on the API's store; returns the new charger's uuid.
    pub async fn add_charger(&self, identity: &str) -> String {
        let args = [
            "charger",
            "add",
            "--identity",
            identity,
            "--security-profile",
            "0",
        ];
        let out = self.cli(&args).await;
        assert!(
            out.status.success(),
            "cms charger add --identity {identity} failed ({}): {}",
            out.status,
            out.stderr
        );
        let uuid = out.last_line().to_string();
        assert!(is_uuid(&uuid), "charger add printed {:?}", out.stdout);
        uuid
    }

    /// `cms charger import` of these identities (one store transaction); returns each uuid.
    pub async fn import_chargers(&self, identities: &[String]) -> HashMap<String, String> {
        let file = self.logs.path().join("chargers.txt");
        std::fs::write(&file, identities.join("\n")).expect("write the import file");
        let file = file.display().to_string();
        let args = [
            "charger",
            "import",
            "--file",
            &file,
            "--security-profile",
            "0",
        ];
        let out = self.cli(&args).await;
        assert!(out.status.success(), "charger import: {}", out.stderr);
        let uuids: HashMap<String, String> = out
            .stdout
            .lines()
            .filter_map(|line| line.split_once(' '))
            .map(|(uuid, identity)| (identity.trim().to_string(), uuid.to_string()))
            .collect();
        assert_eq!(
            uuids.len(),
            identities.len(),
            "import printed {}",
            out.stdout
        );
        uuids
    }

    /// Starts one more `cms api` (same store, broker and prefix: replicas share the consumer
    /// group); returns the `http://127.0.0.1:PORT` of its REST listener.
    pub async fn add_api_replica(&mut self) -> String {
        let n = self.api_replicas.len() + 2;
        let log = self.logs.path().join(format!("api-{n}.log"));
        let ready = ["cms: serving REST on "];
        let what = format!("cms api #{n}");
        let (process, lines) = CmsProcess::start(&what, &self.api_args, &log, &ready).await;
        self.api_replicas.push(process);
        lines[0].trim_end_matches('/').to_string()
    }

    /// A REST client with a token of every scope.
    pub async fn rest(&self) -> Api {
        Api::at(&self.rest_base, &self.operator_token().await)
    }

    /// A new personal access token of the operator, with every scope (`cms token create`).
    pub async fn operator_token(&self) -> String {
        let args = [
            "token",
            "create",
            "--email",
            "operator@example.com",
            "--name",
            "Kafka E2E",
        ];
        let out = self.cli(&args).await;
        assert!(out.status.success(), "token create: {}", out.stderr);
        out.last_line().to_string()
    }

    /// Polls every gateway named, without opening a session, until each accepts `identity`;
    /// returns how long each took from `since` (bounded by `limit`).
    pub async fn wait_until_accepted(
        &self,
        identity: &str,
        node_ids: &[&str],
        since: Instant,
        limit: Duration,
    ) -> Vec<Duration> {
        let mut took = Vec::new();
        for node in node_ids {
            let addr = &self.gateway(node).ocpp_addr;
            loop {
                let last = match probe(addr, identity).await {
                    Ok(_) => break,
                    Err(Refused::Status(status)) => format!("HTTP {status}"),
                    Err(Refused::Unreachable(why)) => why,
                };
                assert!(
                    since.elapsed() < limit,
                    "gateway {node} still refuses {identity} {:?} after it was registered \
                     (last answer: {last})",
                    since.elapsed()
                );
                tokio::time::sleep(POLL_EVERY).await;
            }
            took.push(since.elapsed());
        }
        took
    }
}

async fn start_gateway(
    brokers: &str,
    prefix: &str,
    node_id: &str,
    logs: &TempDir,
    extra: &[&str],
) -> Gateway {
    let args: Vec<String> = [
        "gateway",
        "--kafka-brokers",
        brokers,
        "--kafka-partitions",
        PARTITIONS,
        "--topic-prefix",
        prefix,
        "--node-id",
        node_id,
        "--ocpp-addr",
        "127.0.0.1:0",
        "--http-addr",
        "127.0.0.1:0",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect();
    let log = logs.path().join(format!("gateway-{node_id}.log"));
    let mut ready = vec![
        "cms: serving OCPP on ws://",
        "cms: serving metrics on http://",
    ];
    if extra.contains(&"--ops-addr") {
        ready.push(OPS_LINE);
    }
    let what = format!("cms gateway {node_id}");
    let (process, lines) = CmsProcess::start(&what, &args, &log, &ready).await;
    let ocpp_addr = lines[0]
        .strip_suffix("/ocpp/{identity}")
        .unwrap_or_else(|| panic!("OCPP ready line should end with /ocpp/{{identity}}"))
        .to_string();
    assert!(
        ocpp_addr.starts_with("127.0.0.1:"),
        "gateway {node_id} serves OCPP on {ocpp_addr}"
    );
    Gateway {
        node_id: node_id.to_string(),
        ocpp_addr,
        ops_base: format!("http://{}", lines[1].trim_end_matches('/')),
        probes_base: lines
            .get(2)
            .map(|l| format!("http://{}", l.trim_end_matches('/'))),
        process,
    }
}

/// Polls `{base}/readyz` of any process (an API's REST listener, a gateway's probes) until it
/// answers 200, bounded; returns how many answers were 503 before.
pub async fn wait_ready_at(what: &str, base: &str) -> usize {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(REPLY_TIMEOUT)
        .build()
        .expect("http client");
    let url = format!("{base}/readyz");
    let limit = Duration::from_secs(30);
    let started = Instant::now();
    let mut unready = 0;
    loop {
        let status = client.get(&url).send().await.map(|r| r.status().as_u16());
        match status {
            Ok(200) => return unready,
            Ok(503) => unready += 1,
            _ => {}
        }
        assert!(
            started.elapsed() < limit,
            "{what} not ready within {limit:?}: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls the gateway's /readyz until 200 (its registry is loaded), bounded.
async fn wait_ready(gateway: &Gateway) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(REPLY_TIMEOUT)
        .build()
        .expect("http client");
    let url = format!("{}/readyz", gateway.ops_base);
    let limit = Duration::from_secs(30);
    let started = Instant::now();
    loop {
        let status = client.get(&url).send().await.map(|r| r.status().as_u16());
        if matches!(status, Ok(200)) {
            return;
        }
        assert!(
            started.elapsed() < limit,
            "gateway {} not ready within {limit:?}: {status:?}\nstderr:\n{}",
            gateway.node_id,
            gateway.process.log_tail()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
