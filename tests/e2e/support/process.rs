//! Any long-running `cms` subcommand (`gateway`, `api`, ...) as a child process: started with its
//! ready lines parsed, stopped with SIGTERM or killed with SIGKILL, and always ended on drop.

use super::cms::CliOutput;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a `cms` process may take to print its ready lines (topic creation on a busy broker
/// included).
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a process may take to exit after SIGTERM before the test fails.
const EXIT_TIMEOUT: Duration = Duration::from_secs(15);
/// On drop: how long a process gets to stop gracefully (leave its consumer group, flush) before
/// it is killed.
const DROP_GRACE: Duration = Duration::from_secs(3);

pub struct CmsProcess {
    /// Names the process in failure messages, e.g. `gateway gw-a`.
    what: String,
    child: Option<Child>,
    /// The child's stderr (appended to across restarts of the same role).
    log: PathBuf,
}

impl CmsProcess {
    /// Starts `cms <args>` with stderr appended to `log`, and waits (bounded) until it printed a
    /// line starting with each of `ready`. Returns the process and, in the order of `ready`, the
    /// rest of each such line.
    pub async fn start(
        what: &str,
        args: &[String],
        log: &Path,
        ready: &[&str],
    ) -> (CmsProcess, Vec<String>) {
        let stderr = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .expect("open the process log");
        let mut child = Command::new(env!("CARGO_BIN_EXE_cms"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(stderr))
            .spawn()
            .unwrap_or_else(|e| panic!("spawn cms {}: {e}", args.join(" ")));
        let mut lines = stdout_lines(&mut child);
        let mut process = CmsProcess {
            what: what.to_string(),
            child: Some(child),
            log: log.to_path_buf(),
        };
        let mut found: Vec<Option<String>> = vec![None; ready.len()];
        let mut seen = Vec::new();
        let waited = tokio::time::timeout(STARTUP_TIMEOUT, async {
            while found.iter().any(Option::is_none) {
                let Some(line) = lines.recv().await else {
                    return false;
                };
                for (prefix, slot) in ready.iter().zip(found.iter_mut()) {
                    if let Some(rest) = line.strip_prefix(prefix) {
                        *slot = Some(rest.trim().to_string());
                    }
                }
                seen.push(line);
            }
            true
        })
        .await;
        match waited {
            Ok(true) => {}
            Ok(false) => {
                let status = process.child.as_mut().and_then(|c| c.wait().ok());
                panic!(
                    "{what} exited ({status:?}) before printing its ready lines {ready:?}; \
                     stdout: {seen:?}\nstderr:\n{}",
                    process.log_tail()
                );
            }
            Err(_) => panic!(
                "{what} did not print its ready lines {ready:?} within {STARTUP_TIMEOUT:?}; \
                 stdout: {seen:?}\nstderr:\n{}",
                process.log_tail()
            ),
        }
        let found = found.into_iter().map(Option::unwrap_or_default).collect();
        (process, found)
    }

    pub fn is_running(&mut self) -> bool {
        match self.child.as_mut() {
            Some(child) => child.try_wait().ok().flatten().is_none(),
            None => false,
        }
    }

    /// SIGTERM, then waits (bounded) for the exit; fails the test if it does not come.
    pub async fn terminate(&mut self) -> ExitStatus {
        self.signal("-TERM");
        match self.wait(EXIT_TIMEOUT).await {
            Some(status) => status,
            None => panic!(
                "{} did not exit within {EXIT_TIMEOUT:?} of SIGTERM\nstderr:\n{}",
                self.what,
                self.log_tail()
            ),
        }
    }

    /// SIGKILL: the process dies at once, mid-whatever it was doing.
    pub async fn kill(&mut self) {
        self.signal("-KILL");
        if self.wait(EXIT_TIMEOUT).await.is_none() {
            panic!("{} survived SIGKILL for {EXIT_TIMEOUT:?}", self.what);
        }
    }

    fn signal(&mut self, signal: &str) {
        let pid = self
            .child
            .as_ref()
            .unwrap_or_else(|| panic!("{} is not running", self.what))
            .id()
            .to_string();
        let sent = Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill {signal} {pid} ({}) failed", self.what);
    }

    /// Waits for the exit for at most `limit`; `None` (and the process killed) on time-out.
    async fn wait(&mut self, limit: Duration) -> Option<ExitStatus> {
        let mut child = self.child.take()?;
        wait_exit(&mut child, limit).await
    }

    /// The end of the process's stderr, for failure messages.
    pub fn log_tail(&self) -> String {
        log_tail(&self.log, 40)
    }

    /// The process's whole stderr so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for CmsProcess {
    /// SIGTERM and a short grace (a consumer leaves its group cleanly, so the next test on a
    /// shared broker does not wait out its session), then SIGKILL.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take()
            && child.try_wait().ok().flatten().is_none()
        {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = std::time::Instant::now() + DROP_GRACE;
            while child.try_wait().ok().flatten().is_none() {
                if std::time::Instant::now() >= deadline {
                    let _ = child.kill();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.wait();
        }
        if std::thread::panicking() {
            eprintln!("---- {} stderr (tail) ----\n{}", self.what, self.log_tail());
        }
    }
}

/// The last `n` lines of a log file.
/// The child's stdout as lines, drained for the child's whole life by a thread so that it never
/// blocks on a full pipe.
pub fn stdout_lines(child: &mut Child) -> mpsc::UnboundedReceiver<String> {
    let stdout = child.stdout.take().expect("piped stdout");
    let (lines_tx, lines) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = lines_tx.send(line);
        }
    });
    lines
}

pub fn log_tail(path: &Path, n: usize) -> String {
    let log = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Waits for `child` to exit for at most `limit`; `None` (and the child killed) on time-out.
pub async fn wait_exit(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `cms <args> --data-dir DIR` to completion, failing the test if it takes longer than
/// `limit`; captures stdout and stderr.
pub async fn run_cli(store: &[String], args: &[&str], limit: Duration) -> CliOutput {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cms"))
        .args(args)
        .args(store)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn a cms admin command");
    // Drained while the command runs, so it never blocks on a full pipe.
    let stdout = read_in_background(child.stdout.take().expect("piped stdout"));
    let stderr = read_in_background(child.stderr.take().expect("piped stderr"));
    let Some(status) = wait_exit(&mut child, limit).await else {
        panic!("`cms {}` did not finish within {limit:?}", args.join(" "));
    };
    CliOutput {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

fn read_in_background(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}
