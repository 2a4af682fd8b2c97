//! The third-party central system that cms relays chargers to (proxy relaying):
//! tests/interop/ocpp16_central_system.py (the Python `ocpp` package, which checks every call
//! and answer against the OCPP 1.6 schemas) as a child process. What it printed is read back as
//! JSON lines (who connected, what arrived in which order, what it answered); its stdin makes
//! it call a charger or close a connection. It is killed when dropped.

use super::POLL_EVERY;
use super::process::stdout_lines;
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;
use tempfile::TempDir;
use tokio::sync::mpsc;

/// How long the script may take to start Python and listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a line a test waits for may take to be printed; above the script's own 10 s
/// time-out on a charger's answer, so that a `call` always ends with its `sent` line.
pub const LINE_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the script may take to exit once its stdin is closed.
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct CentralSystem {
    /// `ws://127.0.0.1:PORT` (`wss://` with `--tls-cert`/`--tls-key`), without a path.
    url: String,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    /// Every line printed so far, parsed (a line that is not JSON is kept as a string).
    printed: Vec<Value>,
    /// Holds `stderr.log`, the script's stderr.
    logs: TempDir,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/ocpp16_central_system.py")
}

impl CentralSystem {
    /// Starts the central system with the script's `options` (`--basic USER:PASS`,
    /// `--tls-cert F --tls-key F`, `--interval N`, `--transaction-id N`, `--silent`,
    /// `--silent-after N`) on a free port, and waits until it listens.
    pub async fn start(options: &[&str]) -> CentralSystem {
        let logs = TempDir::new().expect("temp dir for the central system's stderr");
        let stderr = std::fs::File::create(logs.path().join("stderr.log")).expect("stderr.log");
        let mut child = Command::new("python3")
            .arg(script())
            .args(options)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "could not run python3 ({e}): the proxy tests need python3 with the \
                     packages of tests/interop/requirements.txt (scripts/test installs them)"
                )
            });
        let mut central = CentralSystem {
            url: String::new(),
            stdin: child.stdin.take(),
            lines: stdout_lines(&mut child),
            child: Some(child),
            printed: Vec::new(),
            logs,
        };
        let what = "`listening`, with python3 holding the packages of \
                    tests/interop/requirements.txt";
        let listening = central
            .wait_within(LISTEN_TIMEOUT, what, |l| l.get("listening").is_some())
            .await;
        central.url = listening["listening"]
            .as_str()
            .expect("`listening` is a URL")
            .to_string();
        central
    }

    /// `ws://127.0.0.1:PORT` (or `wss://`); chargers are served at any `URL/…/IDENTITY`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every line printed so far.
    pub fn printed(&mut self) -> &[Value] {
        while let Ok(line) = self.lines.try_recv() {
            let parsed = serde_json::from_str(&line).unwrap_or(Value::String(line));
            self.printed.push(parsed);
        }
        &self.printed
    }

    /// The CALLs of `action` that arrived from any charger, in order (`{"received": ACTION,
    /// "unique_id", "payload", "identity", "connection", "at"}`).
    pub fn received_of(&mut self, action: &str) -> Vec<Value> {
        let printed = self.printed();
        let of_action = printed.iter().filter(|l| l["received"] == action);
        of_action.cloned().collect()
    }

    /// Waits (bounded) for a line satisfying `wanted`; returns the first such line.
    pub async fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        self.wait_within(LINE_TIMEOUT, what, wanted).await
    }

    /// Waits for a CALL of `action` whose `received` line satisfies `wanted` (which may look at
    /// `identity` and `payload`); returns that line.
    pub async fn wait_received(&mut self, action: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let what = format!("that it received a {action} as wanted");
        self.wait_for(&what, |l| l["received"] == action && wanted(l))
            .await
    }

    async fn wait_within(
        &mut self,
        limit: Duration,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(found) = self.printed().iter().find(|l| wanted(l)) {
                return found.clone();
            }
            let exited = self.exit_status();
            if exited.is_some() || tokio::time::Instant::now() >= deadline {
                let state = match exited {
                    Some(status) => format!("it exited ({status})"),
                    None => format!("it did not within {limit:?}"),
                };
                panic!(
                    "expected the central system to print {what}, but {state}; it printed:\n{}",
                    self.describe()
                );
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    /// Sends the CALL `action` with `payload` to the latest connection of `identity` (a charger
    /// connected by now) and returns its `sent` line: `answer` holds the CALLRESULT's payload,
    /// `error` `[code, description]` for a CALLERROR, `timeout` is true when none came in 10 s.
    pub async fn call(&mut self, identity: &str, action: &str, payload: &Value) -> Value {
        let of_this = |l: &&Value| l["sent"] == action && l["identity"] == identity;
        let before = self.printed().iter().filter(of_this).count();
        self.command(&format!("call {identity} {action} {payload}"));
        let deadline = tokio::time::Instant::now() + LINE_TIMEOUT;
        loop {
            // The script says why a call could not go (or its answer broke the schema) in an
            // `unexpected` line, never in a `sent` one: fail at once rather than time out.
            self.assert_nothing_unexpected();
            if let Some(sent) = self.printed().iter().filter(of_this).nth(before) {
                return sent.clone();
            }
            if tokio::time::Instant::now() >= deadline {
                panic!(
                    "the central system did not send {action} to {identity} within \
                     {LINE_TIMEOUT:?}:\n{}",
                    self.describe()
                );
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    /// Closes the latest connection of `identity` (close code 1000) and waits until it is gone.
    pub async fn close(&mut self, identity: &str) {
        let connected = self
            .printed()
            .iter()
            .rev()
            .find(|l| l["connected"] == identity);
        let connection = match connected {
            Some(line) => line["connection"].clone(),
            None => panic!("the central system has no connection of {identity} to close"),
        };
        self.command(&format!("close {identity}"));
        let what = format!("that connection {connection} of {identity} closed");
        self.wait_for(&what, |l| {
            l["disconnected"] == identity && l["connection"] == connection
        })
        .await;
    }

    fn command(&mut self, line: &str) {
        let stdin = self
            .stdin
            .as_mut()
            .expect("the central system's stdin is open");
        writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .unwrap_or_else(|e| panic!("could not tell the central system to {line}: {e}"));
    }

    /// Fails if it printed an `unexpected` line (a charger's call that broke its schema or that
    /// it has no handler for, an upgrade without `ocpp1.6`, a charger's invalid answer, a stdin
    /// command it could not carry out).
    pub fn assert_nothing_unexpected(&mut self) {
        let unexpected: Vec<Value> = self
            .printed()
            .iter()
            .filter(|l| l.get("unexpected").is_some())
            .cloned()
            .collect();
        assert!(
            unexpected.is_empty(),
            "the central system saw what it should not have: {unexpected:?}\nstderr:\n{}",
            self.stderr()
        );
    }

    /// Closes its stdin (it closes every connection and exits) and fails unless it exited 0 with
    /// nothing unexpected.
    pub async fn finish(mut self) {
        self.stdin = None;
        let mut child = self.child.take().expect("the central system is running");
        let status = super::process::wait_exit(&mut child, EXIT_TIMEOUT).await;
        self.assert_nothing_unexpected();
        assert!(
            status.is_some_and(|s| s.success()),
            "expected the central system to exit 0 once its stdin closed, but it ended \
             {status:?}; it printed:\n{}",
            self.describe()
        );
    }

    fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// The end of its stderr (the `ocpp` package's logs, the tracebacks).
    pub fn stderr(&self) -> String {
        super::process::log_tail(&self.logs.path().join("stderr.log"), 40)
    }

    /// Its stdout (the last 60 lines) and stderr, for failure messages.
    fn describe(&mut self) -> String {
        let printed = self.printed();
        let tail: Vec<String> = printed[printed.len().saturating_sub(60)..]
            .iter()
            .map(Value::to_string)
            .collect();
        format!("{}\nstderr:\n{}", tail.join("\n"), self.stderr())
    }
}

impl Drop for CentralSystem {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            let printed = self.describe();
            eprintln!("---- central system (stdout, stderr) ----\n{printed}");
        }
    }
}
