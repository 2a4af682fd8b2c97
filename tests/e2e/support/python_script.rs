//! A third-party test peer written in Python (tests/interop) as a child process that prints JSON
//! lines and takes commands on its stdin: the commanded charge point and the central system both
//! run this way. Killed when dropped; what it printed is shown when a test fails.

use super::POLL_EVERY;
use super::process::{log_tail, stdout_lines, wait_exit};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::Duration;
use tempfile::TempDir;
use tokio::sync::mpsc;

/// How long the script may take to exit once its stdin is closed.
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct PythonScript {
    /// Names it in failure messages ("the charge point CP-1").
    pub name: String,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: mpsc::UnboundedReceiver<String>,
    /// Every line printed so far, parsed (a line that is not JSON is kept as a string).
    printed: Vec<Value>,
    /// Holds `stderr.log`, the script's stderr.
    logs: TempDir,
}

impl PythonScript {
    /// Runs `python3 script args...`; `needs` says what the test needs when python3 is missing.
    pub fn start(name: String, script: &Path, args: &[&str], needs: &str) -> PythonScript {
        let logs = TempDir::new().expect("temp dir for the script's stderr");
        let stderr = std::fs::File::create(logs.path().join("stderr.log")).expect("stderr.log");
        let mut child = Command::new("python3")
            .arg(script)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "could not run python3 ({e}): {needs} need python3 with the packages of \
                     tests/interop/requirements.txt (scripts/test installs them)"
                )
            });
        PythonScript {
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

    /// Writes one command line to its stdin.
    pub fn command(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the script's stdin is open");
        writeln!(stdin, "{line}")
            .and_then(|_| stdin.flush())
            .unwrap_or_else(|e| panic!("could not tell {} to {line}: {e}", self.name));
    }

    /// Fails if it printed an `unexpected` line.
    pub fn assert_nothing_unexpected(&mut self) {
        let unexpected: Vec<Value> = self
            .printed()
            .iter()
            .filter(|l| l.get("unexpected").is_some())
            .cloned()
            .collect();
        assert!(
            unexpected.is_empty(),
            "{} saw what it should not have: {unexpected:?}\nstderr:\n{}",
            self.name,
            self.stderr()
        );
    }

    /// Closes its stdin and fails unless it exited 0 with nothing unexpected.
    pub async fn finish(&mut self) {
        self.stdin = None;
        let mut child = self.child.take().expect("the script is running");
        let status = wait_exit(&mut child, EXIT_TIMEOUT).await;
        self.assert_nothing_unexpected();
        let printed = self.describe();
        assert!(
            status.is_some_and(|s| s.success()),
            "expected {} to exit 0 once its stdin closed, but it ended {status:?}; it printed:\n{printed}",
            self.name
        );
    }

    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }

    /// The end of its stderr (the `ocpp` package's logs, the tracebacks).
    pub fn stderr(&self) -> String {
        log_tail(&self.logs.path().join("stderr.log"), 40)
    }

    /// Its stdout (the last 60 lines) and stderr, for failure messages.
    pub fn describe(&mut self) -> String {
        let printed = self.printed();
        let tail: Vec<String> = printed[printed.len().saturating_sub(60)..]
            .iter()
            .map(Value::to_string)
            .collect();
        format!("{}\nstderr:\n{}", tail.join("\n"), self.stderr())
    }
}

impl Drop for PythonScript {
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
