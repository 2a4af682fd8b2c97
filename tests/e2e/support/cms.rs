//! One `cms up` child process on its own store (a temporary data dir, or a fresh PostgreSQL
//! schema), plus the admin commands run against that store. The child is killed when the [`Cms`] is dropped.

use super::process::{run_cli, stdout_lines, wait_exit};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;
use tempfile::TempDir;

/// How long `cms up` may take to print its ready lines.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(20);
/// How long `cms` may take to exit after SIGTERM/SIGINT, or an admin command to finish.
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a [`Cms`] keeps its store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// SQLite in a temporary data directory (the embedded default).
    Sqlite,
    /// A fresh schema on the test PostgreSQL server (`CMS_TEST_POSTGRES_URL`).
    Postgres,
}

pub struct Cms {
    /// The data directory (kept alive for SQLite; unused with PostgreSQL).
    _data: TempDir,
    /// How `cms` finds the store: `--data-dir DIR` or `--database-url URL`.
    store: Vec<String>,
    /// Holds `cms.log`, the children's stderr (appended across restarts).
    logs: TempDir,
    args: Vec<String>,
    running: Option<Running>,
}

struct Running {
    child: Child,
    ocpp_addr: String,
    /// The wss listener's `127.0.0.1:PORT`, when `--ocpp-tls-addr` was given.
    ocpp_tls_addr: Option<String>,
    /// `http://127.0.0.1:PORT`, or `https://...` with `--http-tls-cert`.
    http_base: String,
    /// `http://127.0.0.1:PORT` of the probes and metrics listener, with `--ops-addr`.
    ops_base: Option<String>,
}

/// What an admin command printed, and how it exited.
pub struct CliOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl CliOutput {
    /// The last non-empty line of stdout, where the admin commands print their result.
    pub fn last_line(&self) -> &str {
        self.stdout
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
    }
}

impl Cms {
    /// `cms up` with the default options.
    pub async fn up() -> Cms {
        Cms::up_with(&[]).await
    }

    /// `cms up` with extra options (e.g. `["--ws-idle-timeout", "3s"]`).
    pub async fn up_with(args: &[&str]) -> Cms {
        let data = TempDir::new().expect("temp data dir");
        let store = vec!["--data-dir".into(), data.path().display().to_string()];
        Cms::up_with_store(data, store, args).await
    }

    /// `cms up` on the given store backend; `None` when PostgreSQL is asked for but no test
    /// server is configured (outside CI only: in CI that fails the test).
    pub async fn up_on(backend: Backend) -> Option<Cms> {
        Cms::up_on_with(backend, &[]).await
    }

    /// [`Cms::up_on`] with extra options.
    pub async fn up_on_with(backend: Backend, args: &[&str]) -> Option<Cms> {
        match backend {
            Backend::Sqlite => Some(Cms::up_with(args).await),
            Backend::Postgres => {
                let server = cms_store::testing::postgres_url()?;
                let url = cms_store::testing::fresh_schema(&server)
                    .await
                    .expect("create a schema on the test PostgreSQL server");
                let data = TempDir::new().expect("temp data dir");
                Some(Cms::up_with_store(data, vec!["--database-url".into(), url], args).await)
            }
        }
    }

    /// `cms up --database-url URL`.
    pub async fn up_on_database(url: &str) -> Cms {
        let data = TempDir::new().expect("temp data dir");
        Cms::up_with_store(data, vec!["--database-url".into(), url.to_string()], &[]).await
    }

    async fn up_with_store(data: TempDir, store: Vec<String>, args: &[&str]) -> Cms {
        let mut cms = Cms {
            _data: data,
            store,
            logs: TempDir::new().expect("temp log dir"),
            args: args.iter().map(|a| a.to_string()).collect(),
            running: None,
        };
        cms.start().await;
        cms
    }

    /// Starts `cms up` (again) on the same data dir, with new ports.
    pub async fn start(&mut self) {
        assert!(self.running.is_none(), "cms is already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("open cms.log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_cms"))
            .arg("up")
            .args(&self.store)
            .args(["--ocpp-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"])
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("spawn cms up");
        let mut lines = stdout_lines(&mut child);
        let mut running = Running {
            child,
            ocpp_addr: String::new(),
            ocpp_tls_addr: None,
            http_base: String::new(),
            ops_base: None,
        };
        let ready = tokio::time::timeout(STARTUP_TIMEOUT, async {
            let mut seen = Vec::new();
            while running.ocpp_addr.is_empty() || running.http_base.is_empty() {
                let Some(line) = lines.recv().await else {
                    return Err(seen);
                };
                if let Some(rest) = line.strip_prefix("cms: serving OCPP on ws://") {
                    let addr = rest.strip_suffix("/ocpp/{identity}").unwrap_or_else(|| {
                        panic!("OCPP ready line should end with /ocpp/{{identity}}: {line:?}")
                    });
                    running.ocpp_addr = addr.to_string();
                } else if let Some(rest) = line.strip_prefix("cms: serving OCPP on wss://") {
                    // Printed with the ws line, before the REST one.
                    let addr = rest.strip_suffix("/ocpp/{identity}").unwrap_or_else(|| {
                        panic!("OCPP ready line should end with /ocpp/{{identity}}: {line:?}")
                    });
                    running.ocpp_tls_addr = Some(addr.to_string());
                } else if let Some(rest) =
                    line.strip_prefix("cms: serving probes and metrics on http://")
                {
                    // Printed before the REST line.
                    running.ops_base = Some(format!("http://{}", rest.trim_end_matches('/')));
                } else if let Some(rest) = line.strip_prefix("cms: serving REST on ") {
                    assert!(
                        rest.starts_with("http://127.0.0.1:")
                            || rest.starts_with("https://127.0.0.1:"),
                        "REST ready line: {line:?}"
                    );
                    running.http_base = rest.trim_end_matches('/').to_string();
                }
                seen.push(line);
            }
            Ok(())
        })
        .await;
        match ready {
            Ok(Ok(())) => self.running = Some(running),
            Ok(Err(seen)) => {
                let status = running.child.wait().ok();
                panic!(
                    "cms up exited ({status:?}) before printing both ready lines; stdout: {seen:?}\nstderr:\n{}",
                    self.log_tail()
                );
            }
            Err(_) => {
                let _ = running.child.kill();
                let _ = running.child.wait();
                panic!(
                    "cms up printed no ready lines within {STARTUP_TIMEOUT:?}\nstderr:\n{}",
                    self.log_tail()
                );
            }
        }
    }

    fn running(&self) -> &Running {
        self.running.as_ref().expect("cms is not running")
    }

    /// `127.0.0.1:PORT` of the OCPP listener.
    pub fn ocpp_addr(&self) -> &str {
        &self.running().ocpp_addr
    }

    /// `ws://127.0.0.1:PORT/ocpp/{identity}`; `identity` goes in as given (already encoded).
    pub fn ocpp_url(&self, identity: &str) -> String {
        format!("ws://{}/ocpp/{identity}", self.ocpp_addr())
    }

    /// `wss://127.0.0.1:PORT/ocpp/{identity}` on the wss listener (`--ocpp-tls-addr`).
    pub fn wss_url(&self, identity: &str) -> String {
        let addr = self.running().ocpp_tls_addr.as_deref();
        let addr = addr.expect("cms was started without --ocpp-tls-addr");
        format!("wss://{addr}/ocpp/{identity}")
    }

    /// `http://127.0.0.1:PORT{path}` (`https://` with `--http-tls-cert`) on the REST listener.
    pub fn http_url(&self, path: &str) -> String {
        format!("{}{path}", self.running().http_base)
    }

    /// `http://127.0.0.1:PORT{path}` on the probes and metrics listener (`--ops-addr`).
    pub fn ops_url(&self, path: &str) -> String {
        let base = self.running().ops_base.as_deref();
        let base = base.expect("cms was started without --ops-addr");
        format!("{base}{path}")
    }

    pub fn pid(&self) -> u32 {
        self.running().child.id()
    }

    /// Sends SIGTERM and waits (bounded) for the process to exit.
    pub async fn terminate(&mut self) -> ExitStatus {
        self.signal("-TERM").await
    }

    /// Sends SIGKILL (a crash, a power cut) and waits (bounded) for the process to exit.
    pub async fn kill(&mut self) -> ExitStatus {
        self.signal("-KILL").await
    }

    /// Sends SIGINT and waits (bounded) for the process to exit.
    pub async fn interrupt(&mut self) -> ExitStatus {
        self.signal("-INT").await
    }

    /// Sends SIGHUP, which reloads the TLS certificates; the process keeps running.
    pub fn hang_up(&self) {
        self.send_signal("-HUP");
    }

    fn send_signal(&self, signal: &str) {
        let pid = self.pid().to_string();
        let sent = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill {signal} {pid} failed");
    }

    async fn signal(&mut self, signal: &str) -> ExitStatus {
        self.send_signal(signal);
        let mut running = self.running.take().expect("cms is not running");
        match wait_exit(&mut running.child, EXIT_TIMEOUT).await {
            Some(status) => status,
            None => panic!(
                "cms did not exit within {EXIT_TIMEOUT:?} of kill {signal}\nstderr:\n{}",
                self.log_tail()
            ),
        }
    }

    /// The store `cms up` runs on, opened beside it as the admin commands do: for writing rows
    /// no REST endpoint writes yet.
    pub async fn open_store(&self) -> cms_store::Store {
        let opened = match self.store[0].as_str() {
            "--data-dir" => cms_store::Store::open(std::path::Path::new(&self.store[1])).await,
            _ => cms_store::Store::open_url(&self.store[1]).await,
        };
        opened.expect("open the store of cms up")
    }

    /// How the admin commands reach this instance's store: `--data-dir DIR` or
    /// `--database-url URL`.
    pub fn store_args(&self) -> &[String] {
        &self.store
    }

    /// Runs `cms <args>` on this instance's store to completion (bounded in time).
    pub async fn cli(&self, args: &[&str]) -> CliOutput {
        run_cli(&self.store, args, EXIT_TIMEOUT).await
    }

    /// `cms charger add --identity ID [extra...]`; returns the new charger's uuid.
    /// Unless `extra` gives a password or a security profile, the charger takes no credentials
    /// (`--security-profile 0`, as on a test bench).
    pub async fn add_charger_with(&self, identity: &str, extra: &[&str]) -> String {
        let mut args = vec!["charger", "add", "--identity", identity];
        args.extend_from_slice(extra);
        if !extra
            .iter()
            .any(|a| *a == "--password" || *a == "--security-profile")
        {
            args.extend_from_slice(&["--security-profile", "0"]);
        }
        let out = self.cli(&args).await;
        assert!(
            out.status.success(),
            "`cms {}` failed ({}): {}",
            args.join(" "),
            out.status,
            out.stderr
        );
        let uuid = out.last_line().to_string();
        assert!(
            is_uuid(&uuid),
            "charger add should print a uuid last, got {:?}",
            out.stdout
        );
        self.wait_until_known(identity).await;
        uuid
    }

    /// Waits until the gateway knows `identity` (its directory follows the store's registry a
    /// few times a second), probing without a subprotocol so that no session starts.
    pub async fn wait_until_known(&self, identity: &str) {
        super::eventually(&format!("the gateway to know {identity}"), async || {
            match super::station::probe(self.ocpp_addr(), identity).await {
                Err(super::station::Refused::Status(404)) => Err("404".to_string()),
                Err(super::station::Refused::Unreachable(why)) => Err(why),
                _ => Ok(()),
            }
        })
        .await;
    }

    /// `cms charger add --identity ID`: a test-bench charger that connects without
    /// credentials, in the default site; returns the uuid.
    pub async fn add_charger(&self, identity: &str) -> String {
        self.add_charger_with(identity, &[]).await
    }

    /// `cms charger licenses ID --smart S --pro P`: the platform operator's grant.
    pub async fn license(&self, identity: &str, smart: bool, pro: bool) {
        license_with(&self.store, identity, smart, pro).await;
    }

    /// `cms token create` for `email`, with all scopes or the given comma-separated ones.
    pub async fn create_token(&self, email: &str, scopes: Option<&str>) -> String {
        self.create_token_with(email, scopes, &[]).await
    }

    /// A token for a user outside the operators' team (`--guest`): they see only what their
    /// own teams own or are granted, the way another customer of the service would.
    pub async fn guest_token(&self, email: &str) -> String {
        self.create_token_with(email, None, &["--guest"]).await
    }

    async fn create_token_with(&self, email: &str, scopes: Option<&str>, extra: &[&str]) -> String {
        let mut args = vec![
            "token",
            "create",
            "--email",
            email,
            "--name",
            "E2E Operator",
        ];
        if let Some(scopes) = scopes {
            args.extend_from_slice(&["--scopes", scopes]);
        }
        args.extend_from_slice(extra);
        let out = self.cli(&args).await;
        assert!(
            out.status.success(),
            "`cms {}` failed: {}",
            args.join(" "),
            out.stderr
        );
        let token = out.last_line().to_string();
        let secret = token.split_once('|').map(|(_, s)| s).unwrap_or("");
        assert!(
            secret.len() == 40 && secret.chars().all(|c| c.is_ascii_alphanumeric()),
            "token create should print `<id>|<40 alphanumerics>` last, got {:?}",
            out.stdout
        );
        token
    }

    /// A token with every scope for the default operator.
    pub async fn operator_token(&self) -> String {
        self.create_token("operator@example.com", None).await
    }

    fn log_path(&self) -> std::path::PathBuf {
        self.logs.path().join("cms.log")
    }

    /// Everything the children wrote to stderr (their logs) so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    /// The end of the children's stderr, for failure messages.
    pub fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for Cms {
    fn drop(&mut self) {
        if let Some(mut running) = self.running.take() {
            let _ = running.child.kill();
            let _ = running.child.wait();
        }
        if std::thread::panicking() {
            eprintln!("---- cms stderr (tail) ----\n{}", self.log_tail());
        }
    }
}

/// 8-4-4-4-12 hex digits.
pub fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.chars().all(|c| c.is_ascii_hexdigit()))
}

/// `cms charger licenses` on the store `store` (`--data-dir DIR` or `--database-url URL`).
pub async fn license_with(store: &[String], identity: &str, smart: bool, pro: bool) {
    let (smart, pro) = (smart.to_string(), pro.to_string());
    let args = [
        "charger", "licenses", identity, "--smart", &smart, "--pro", &pro,
    ];
    let out = run_cli(store, &args, EXIT_TIMEOUT).await;
    assert!(
        out.status.success(),
        "`cms {}` failed ({}): {}",
        args.join(" "),
        out.status,
        out.stderr
    );
}
