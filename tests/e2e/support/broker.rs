//! The Kafka broker of the Kafka tests: the shared one named by `CMS_TEST_KAFKA_BROKERS`, or a
//! `tansu` of the test's own on a free port of 127.0.0.1 with its data in a SQLite file of a
//! temporary directory, so it keeps its topics, records, offsets and producer state across a
//! stop and a start on the same port (the fault tests need that; memory storage forgets all).
//!
//! The binary: `CMS_TEST_TANSU`, else `tansu` on PATH, else ~/.cargo/bin/tansu. It must be built
//! with the `libsql` feature (`sqlite://` storage). A missing tansu fails the test, in CI and
//! out of it: a Kafka test never passes by not running.

use super::process::log_tail;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// How long a starting tansu may take to listen.
const LISTEN_TIMEOUT: Duration = Duration::from_secs(20);

/// A broker to run `cms gateway` and `cms api` against.
pub struct Broker {
    /// `host:port` for `--kafka-brokers` and the test's own consumer.
    pub brokers: String,
    /// Our own tansu when there is no shared broker; ended on drop.
    _own: Option<Tansu>,
}

impl Broker {
    /// The shared broker (`CMS_TEST_KAFKA_BROKERS`); outside CI, a tansu of our own when unset.
    pub async fn shared() -> Broker {
        if let Ok(brokers) = std::env::var("CMS_TEST_KAFKA_BROKERS")
            && !brokers.trim().is_empty()
        {
            return Broker {
                brokers,
                _own: None,
            };
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "CMS_TEST_KAFKA_BROKERS must name the shared Kafka broker when CI is set"
        );
        let own = Tansu::start().await;
        Broker {
            brokers: own.brokers(),
            _own: Some(own),
        }
    }
}

/// A tansu process of this test, which the test may kill and start again.
pub struct Tansu {
    port: u16,
    /// Holds the SQLite file (tansu's working directory) and its log.
    dir: TempDir,
    child: Option<Child>,
}

impl Tansu {
    /// Starts a tansu with persistent storage on a free port and waits until it listens.
    pub async fn start() -> Tansu {
        let mut tansu = Tansu {
            port: free_port(),
            dir: TempDir::new().expect("temp dir for tansu"),
            child: None,
        };
        tansu.restart().await;
        tansu
    }

    /// `127.0.0.1:PORT`.
    pub fn brokers(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts tansu again on the same port and the same storage; waits until it listens.
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "tansu is already running");
        let url = format!("tcp://127.0.0.1:{}", self.port);
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("tansu log file");
        let binary = tansu_binary();
        let child = Command::new(&binary)
            .current_dir(self.dir.path())
            .args(["broker", "--listener-url", &url])
            .args(["--advertised-listener-url", &url])
            // Relative to the working directory: the temp dir.
            .args(["--storage-engine", "sqlite://tansu.db"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("tansu log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        self.child = Some(child);
        let addr: SocketAddr = self.brokers().parse().expect("socket address");
        let deadline = Instant::now() + LISTEN_TIMEOUT;
        loop {
            let probe = tokio::task::spawn_blocking(move || {
                TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            });
            if probe.await.unwrap_or(false) {
                return;
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                panic!(
                    "tansu exited at start with {status} (it needs the libsql feature for \
                     sqlite:// storage: cargo install tansu --features libsql); its log:\n{}",
                    log_tail(&self.log_path(), 30)
                );
            }
            assert!(
                Instant::now() < deadline,
                "tansu did not listen on {addr} within {LISTEN_TIMEOUT:?}; its log:\n{}",
                log_tail(&self.log_path(), 30)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// SIGKILL: the broker dies at once, as in a crash or a pulled plug. Returns once the
    /// process is gone.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("tansu.log")
    }
}

impl Drop for Tansu {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!(
                "---- tansu on port {} (tail) ----\n{}",
                self.port,
                log_tail(&self.log_path(), 30)
            );
        }
    }
}

fn tansu_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("CMS_TEST_TANSU") {
        return path.into();
    }
    let on_path = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join("tansu"))
        .find(|p| p.is_file());
    let in_cargo_home = std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cargo/bin/tansu"))
        .filter(|p| p.is_file());
    on_path.or(in_cargo_home).unwrap_or_else(|| {
        panic!(
            "this test needs a tansu broker of its own and none is installed: install it \
             (cargo install tansu --version 0.6.0 --locked --features libsql) or point \
             CMS_TEST_TANSU at it"
        )
    })
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}
