//! The third-party charge point that cms commands: tests/interop/ocpp16_commanded_charge_point.py
//! (the Python `ocpp` package, which checks every call against the OCPP 1.6 schemas) as a child
//! process. What it printed is read back as JSON lines (what arrived, in which order, what it
//! answered); its stdin moves it between connections. It is killed when dropped.

pub mod calls;

use super::POLL_EVERY;
use super::python_script::PythonScript;
use calls::json_eq;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// How long the charge point may take to start Python, connect and boot.
const READY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a line a test waits for may take to be printed.
pub const LINE_TIMEOUT: Duration = Duration::from_secs(20);

pub struct CommandedCharger {
    pub identity: String,
    script: PythonScript,
    /// Connections it made so far (it numbers them from 1).
    connections: u64,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/interop/ocpp16_commanded_charge_point.py")
}

impl CommandedCharger {
    /// Every line printed so far.
    pub fn printed(&mut self) -> &[Value] {
        self.script.printed()
    }

    pub async fn wait_within(
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

    /// Fails if it printed an `unexpected` line (a call that broke its schema, a handler that
    /// failed, an answer of cms it could not accept).
    pub fn assert_nothing_unexpected(&mut self) {
        self.script.assert_nothing_unexpected();
    }

    /// Closes its stdin (it disconnects and exits) and fails unless it exited 0 with nothing
    /// unexpected.
    pub async fn finish(mut self) {
        self.script.finish().await;
    }

    fn describe(&mut self) -> String {
        self.script.describe()
    }

    /// Starts the charge point on `url` (`ws://…/ocpp/IDENTITY`) and waits until it has sent
    /// BootNotification and StatusNotification.
    pub async fn connect(url: &str, identity: &str) -> CommandedCharger {
        CommandedCharger::connect_with(url, identity, &[]).await
    }

    /// [`CommandedCharger::connect`] with the script's options (`--password P`, `--config JSON`).
    pub async fn connect_with(url: &str, identity: &str, options: &[&str]) -> CommandedCharger {
        let mut args = vec![url, identity];
        args.extend_from_slice(options);
        let name = format!("the charge point {identity}");
        let needs = "the tests of commanded chargers";
        let mut charger = CommandedCharger {
            identity: identity.to_string(),
            script: PythonScript::start(name, &script(), &args, needs),
            connections: 0,
        };
        charger.wait_ready().await;
        charger
    }

    /// Waits for the `ready` line of its next connection.
    async fn wait_ready(&mut self) {
        let next = self.connections + 1;
        let mut what = format!("`ready` of connection {next} (connected and booted)");
        if next == 1 {
            what += ", with python3 holding the packages of tests/interop/requirements.txt";
        }
        self.wait_within(READY_TIMEOUT, &what, |l| {
            l.get("ready").is_some() && l["connection"] == next
        })
        .await;
        self.connections = next;
    }

    /// How many times it connected so far.
    pub fn connections(&self) -> u64 {
        self.connections
    }

    /// The CALLs that arrived, in order (`{"received": ACTION, "payload", "unique_id",
    /// "connection", "unanswered", "at"}`).
    pub fn received(&mut self) -> Vec<Value> {
        let printed = self.printed();
        printed
            .iter()
            .filter(|l| l.get("received").is_some())
            .cloned()
            .collect()
    }

    /// The CALLs of `action` that arrived, in order.
    pub fn received_of(&mut self, action: &str) -> Vec<Value> {
        let mut all = self.received();
        all.retain(|l| l["received"] == action);
        all
    }

    /// Waits (bounded) for a line satisfying `wanted`; returns the first such line.
    pub async fn wait_for(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        self.wait_within(LINE_TIMEOUT, what, wanted).await
    }

    /// Waits for the CALL of `action` whose payload is `payload` to arrive; returns its line.
    pub async fn wait_received(&mut self, action: &str, payload: &Value) -> Value {
        let what = format!("that it received {action} {payload}");
        self.wait_for(&what, |l| {
            l["received"] == action && json_eq(&l["payload"], payload)
        })
        .await
    }

    /// Waits for its answer to the CALL `unique_id`; returns the `answered` line (`payload` for
    /// a CALLRESULT, `error: [code, description]` for a CALLERROR).
    pub async fn answer_to(&mut self, unique_id: &Value) -> Value {
        let what = format!("its answer to the call {unique_id}");
        self.wait_for(&what, |l| {
            l.get("answered").is_some() && l["unique_id"] == *unique_id
        })
        .await
    }

    /// Fails unless exactly one CALL of `action` with `payload` arrived.
    pub fn assert_received_once(&mut self, action: &str, payload: &Value) {
        let arrived: Vec<Value> = self
            .received_of(action)
            .into_iter()
            .filter(|l| json_eq(&l["payload"], payload))
            .collect();
        assert_eq!(
            arrived.len(),
            1,
            "expected the charge point {} to receive {action} {payload} exactly once; it \
             received it {} times: {arrived:?}",
            self.identity,
            arrived.len()
        );
    }

    /// Closes its websocket (close code 1000); it stays offline until [`Self::connect_to`].
    pub async fn disconnect(&mut self) {
        self.command("disconnect");
        let connection = self.connections;
        let what = format!("that it closed connection {connection}");
        self.wait_for(&what, |l| {
            l.get("disconnected").is_some() && l["connection"] == connection
        })
        .await;
    }

    /// Connects again, to `url`, and boots; waits until it is ready.
    pub async fn connect_to(&mut self, url: &str) {
        self.command(&format!("connect {url}"));
        self.wait_ready().await;
    }

    /// Makes it send a CALL of its own (`authorize TAG`, `start CONNECTOR TAG`,
    /// `stop TRANSACTION_ID [TAG]`) and returns cms's answer to it.
    pub async fn send(&mut self, line: &str) -> Value {
        let answers = |printed: &[Value]| -> Vec<Value> {
            let sent = printed.iter().filter(|l| l.get("sent").is_some());
            sent.map(|l| l["answer"].clone()).collect()
        };
        let before = answers(self.printed()).len();
        self.command(line);
        let deadline = tokio::time::Instant::now() + LINE_TIMEOUT;
        loop {
            self.assert_nothing_unexpected();
            if let Some(answer) = answers(self.printed()).get(before) {
                return answer.clone();
            }
            if tokio::time::Instant::now() >= deadline {
                let printed = self.describe();
                panic!(
                    "the charge point {} did not send `{line}` within {LINE_TIMEOUT:?}:\n{printed}",
                    self.identity
                );
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    /// Sets its local list's version (the entries stay), as a list changed behind cms's back.
    pub fn set_local_list_version(&mut self, version: i64) {
        self.command(&format!("local-list-version {version}"));
    }
}
