//! Third-party clients written in Python (tests/interop): run to completion, bounded in time.

use std::io::Read;
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

/// What a finished child process printed.
pub struct Output {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `python3 <args>` to completion, killing it after `limit`; `Err` when python3 cannot be
/// started or does not finish in time.
pub async fn python3(args: &[&str], limit: Duration) -> Result<Output, String> {
    let mut child = Command::new("python3")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not run python3: {e}"))?;
    let stdout = drain(child.stdout.take().expect("piped stdout"));
    let stderr = drain(child.stderr.take().expect("piped stderr"));
    let deadline = tokio::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait python3") {
            break status;
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "`python3 {}` did not finish within {limit:?}; stdout:\n{}\nstderr:\n{}",
                args.join(" "),
                stdout.join().unwrap_or_default(),
                stderr.join().unwrap_or_default()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    Ok(Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    })
}

/// Reads a child's pipe to its end on a thread of its own.
fn drain(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = pipe.read_to_string(&mut text);
        text
    })
}
