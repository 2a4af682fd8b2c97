//! The third-party central system that cms relays chargers to (proxy relaying):
//! tests/interop/ocpp16_central_system.py (the Python `ocpp` package, which checks every call
//! and answer against the OCPP 1.6 schemas) as a child process. What it printed is read back as
//! JSON lines (who connected, what arrived in which order, what it answered); its stdin makes
//! it call a charger or close a connection. It is killed when dropped.

use super::POLL_EVERY;
use super::python_script::PythonScript;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// How long the script may take to start Python and listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a line a test waits for may take to be printed; above the script's own 10 s
/// time-out on a charger's answer, so that a `call` always ends with its `sent` line.
pub const LINE_TIMEOUT: Duration = Duration::from_secs(20);

pub struct CentralSystem {
    /// `ws://127.0.0.1:PORT` (`wss://` with `--tls-cert`/`--tls-key`), without a path.
    url: String,
    script: PythonScript,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop/ocpp16_central_system.py")
}

impl CentralSystem {
    /// Starts the central system with the script's `options` (`--basic USER:PASS`,
    /// `--tls-cert F --tls-key F`, `--interval N`, `--transaction-id N`, `--silent`,
    /// `--silent-after N`) on a free port, and waits until it listens.
    pub async fn start(options: &[&str]) -> CentralSystem {
        let needs = "the proxy tests";
        let name = "the central system".to_string();
        let mut central = CentralSystem {
            url: String::new(),
            script: PythonScript::start(name, &script(), options, needs),
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

    /// Every line printed so far.
    pub fn printed(&mut self) -> &[Value] {
        self.script.printed()
    }

    async fn wait_within(
        &mut self,
        limit: Duration,
        what: &str,
        wanted: impl Fn(&Value) -> bool,
    ) -> Value {
        self.script.wait_within(limit, what, wanted).await
    }

    fn command(&mut self, line: &str) {
        self.script.command(line);
    }

    /// Fails if it printed an `unexpected` line (a charger's call that broke its schema or that
    /// it has no handler for, an upgrade without `ocpp1.6`, a charger's invalid answer, a stdin
    /// command it could not carry out).
    pub fn assert_nothing_unexpected(&mut self) {
        self.script.assert_nothing_unexpected();
    }

    /// Closes its stdin (it closes every connection and exits) and fails unless it exited 0 with
    /// nothing unexpected.
    pub async fn finish(mut self) {
        self.script.finish().await;
    }

    fn describe(&mut self) -> String {
        self.script.describe()
    }

    /// `ws://127.0.0.1:PORT` (or `wss://`); chargers are served at any `URL/…/IDENTITY`.
    pub fn url(&self) -> &str {
        &self.url
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
}
