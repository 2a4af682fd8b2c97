//! A third-party webhook receiver (tests/interop/webhook_receiver.py): an HTTP server that
//! verifies every delivery with the Standard Webhooks reference library and reports each request
//! it got. Killed when dropped.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

pub struct Receiver {
    child: Child,
    port: u16,
    secret_file: PathBuf,
    _dir: tempfile::TempDir,
    got: Arc<Mutex<Vec<Value>>>,
}

impl Receiver {
    /// Starts a receiver answering as `args` say (`--fail N`, `--hang`, `--port P`).
    pub fn start(args: &[&str]) -> Receiver {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let secret_file = dir.path().join("secret");
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/interop/webhook_receiver.py"
        );
        let mut child = Command::new("python3")
            .arg(script)
            .arg(&secret_file)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 runs the webhook receiver (scripts/test installs standardwebhooks)");
        let mut lines = BufReader::new(child.stdout.take().expect("piped stdout")).lines();
        let first = lines.next().and_then(|l| l.ok()).unwrap_or_default();
        let port = (first.strip_prefix("listening "))
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("the receiver did not start: {first:?}"));
        let got = Arc::new(Mutex::new(Vec::new()));
        let sink = got.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if let Ok(value) = serde_json::from_str(&line) {
                    sink.lock().unwrap().push(value);
                }
            }
        });
        Receiver {
            child,
            port,
            secret_file,
            _dir: dir,
            got,
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL cms is to deliver to.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Tells the receiver the secret cms showed (read at each request).
    pub fn know_secret(&self, secret: &str) {
        std::fs::write(&self.secret_file, secret).expect("the secret written");
    }

    /// Every request received so far, in the order received.
    pub fn received(&self) -> Vec<Value> {
        self.got.lock().unwrap().clone()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
