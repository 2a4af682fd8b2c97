//! A third-party test peer of any language (tests/interop: a Python script, a Node program) as a
//! child process that prints one JSON object a line and ends when its stdin closes or its own
//! time limit passes. Killed when dropped; what it printed is shown when a test fails.

use super::POLL_EVERY;
use super::process::{log_tail, stdout_lines, wait_exit};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;
use tempfile::TempDir;
use tokio::sync::mpsc;

pub struct Peer {
    /// Names it in failure messages ("the Python 2.0.1 station CP-1").
    pub name: String,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    /// Every line printed so far, parsed (a line that is not JSON is kept as a string).
    printed: Vec<Value>,
    /// Holds `stderr.log`, the peer's stderr.
    logs: TempDir,
}

impl Peer {
    /// Runs `program args...` in `dir`; `needs` says what to install when it cannot start.
    pub fn start(name: String, program: &str, dir: &Path, args: &[&str], needs: &str) -> Peer {
        let logs = TempDir::new().expect("temp dir for the peer's stderr");
        let stderr = std::fs::File::create(logs.path().join("stderr.log")).expect("stderr.log");
        let mut child = Command::new(program)
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .unwrap_or_else(|e| panic!("could not run {program} ({e}): {needs}"));
        Peer {
            name,
            stdin: child.stdin.take(),
            lines: stdout_lines(&mut child),
            child: Some(child),
            printed: Vec::new(),
            logs,
        }
    }

    /// Every line printed so far.
    pub fn printed(&mut self) -> &[Value] {
        while let Ok(line) = self.lines.try_recv() {
            let parsed = serde_json::from_str(&line).unwrap_or(Value::String(line));
            self.printed.push(parsed);
        }
        &self.printed
    }

    /// The lines with the key `key` whose value is `value` (`{"sent": "Authorize", ...}`).
    pub fn lines_where(&mut self, key: &str, value: &str) -> Vec<Value> {
        let printed = self.printed();
        let matching = printed
            .iter()
            .filter(|l| l.get(key).is_some_and(|v| v == value));
        matching.cloned().collect()
    }

    /// Waits (at most `limit`) for a line satisfying `wanted`; returns the first such line.
    pub async fn wait_within(
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
                // Lines printed just before the exit are read once more.
                if let Some(found) = self.printed().iter().find(|l| wanted(l)) {
                    return found.clone();
                }
                let state = match exited {
                    Some(status) => format!("it exited ({status})"),
                    None => format!("it did not within {limit:?}"),
                };
                let printed = self.describe();
                panic!(
                    "expected {} to print {what}, but {state}; it printed:\n{printed}",
                    self.name
                );
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
    }

    /// Closes its stdin (it leaves) and waits, at most `limit`, for it to exit; returns the
    /// status (`None`: it did not exit in time and was killed).
    pub async fn close_stdin_and_wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        self.stdin = None;
        self.wait_exit(limit).await
    }

    /// Waits for it to end by itself (its stdin left open), at most `limit` (then it is killed).
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let mut child = self.child.take().expect("the peer is running");
        let status = wait_exit(&mut child, limit).await;
        // Its last lines, up to the end of its stdout (bounded: a grandchild could hold it).
        let _ = tokio::time::timeout(Duration::from_secs(2), async {
            while let Some(line) = self.lines.recv().await {
                let parsed = serde_json::from_str(&line).unwrap_or(Value::String(line));
                self.printed.push(parsed);
            }
        })
        .await;
        status
    }

    /// Fails unless it exited 0 within `limit` once its stdin closed, printing nothing
    /// `unexpected`.
    pub async fn finish(&mut self, limit: Duration) {
        let status = self.close_stdin_and_wait(limit).await;
        self.assert_exit(status, 0);
    }

    /// Writes one command line to its stdin.
    pub fn command(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the peer's stdin is open");
        writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .unwrap_or_else(|e| panic!("could not tell {} to {line}: {e}", self.name));
    }

    /// The lines it printed that say it saw what it should not have.
    fn unexpected(&mut self) -> Vec<Value> {
        (self.printed().iter())
            .filter(|l| l.get("unexpected").is_some())
            .cloned()
            .collect()
    }

    /// Fails if it printed an `unexpected` line.
    pub fn assert_nothing_unexpected(&mut self) {
        let unexpected = self.unexpected();
        assert!(
            unexpected.is_empty(),
            "{} saw what it should not have: {unexpected:?}\nstderr:\n{}",
            self.name,
            self.stderr()
        );
    }

    /// Fails unless `status` is the exit code `code` and nothing `unexpected` was printed.
    pub fn assert_exit(&mut self, status: Option<ExitStatus>, code: i32) {
        let unexpected = self.unexpected();
        let printed = self.describe();
        assert!(
            unexpected.is_empty() && status.and_then(|s| s.code()) == Some(code),
            "expected {} to exit {code} with nothing unexpected, but it ended {status:?}; it \
             printed:\n{printed}",
            self.name
        );
    }

    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// Its stdout (the last 80 lines) and stderr, for failure messages.
    pub fn describe(&mut self) -> String {
        let printed = self.printed();
        let tail: Vec<String> = printed[printed.len().saturating_sub(80)..]
            .iter()
            .map(Value::to_string)
            .collect();
        format!("{}\nstderr:\n{}", tail.join("\n"), self.stderr())
    }

    /// The end of its stderr (its logs, the tracebacks).
    pub fn stderr(&self) -> String {
        log_tail(&self.logs.path().join("stderr.log"), 40)
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        if std::thread::panicking() {
            let printed = self.describe();
            eprintln!("---- {} (stdout, stderr) ----\n{printed}", self.name);
        }
    }
}
