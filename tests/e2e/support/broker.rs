//! The Kafka broker of the Kafka tests: the shared one named by `CMS_TEST_KAFKA_BROKERS`, or a
//! `tansu` of the test's own on free ports of 127.0.0.1.
//!
//! A broker outage is made one of two ways, whichever the tansu binary allows:
//! - `sqlite://` storage (tansu built with the `libsql` feature): the data lives in a file of a
//!   temporary directory, so the outage is the real thing: the tansu process is killed with
//!   SIGKILL and started again on the same port and file, with its topics, records, offsets
//!   and producer state.
//! - `memory://` storage only (the `dynostore` feature): killing tansu would forget everything,
//!   so tansu keeps running behind a TCP relay of the test, on the port clients know (it is
//!   the advertised listener), and the outage cuts the relay: every connection to the broker
//!   is dropped and the port refuses new ones until it is put back. For `cms` that is the
//!   same as a dead broker; what it does not cover is the broker's own crash recovery.
//!
//! The binary: `CMS_TEST_TANSU`, else `tansu` on PATH, else ~/.cargo/bin/tansu. A missing or
//! unusable tansu fails the test, in CI and out of it: a Kafka test never passes by not running.

use super::process::log_tail;
use std::net::{SocketAddr, TcpListener as StdListener, TcpStream as StdStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tempfile::TempDir;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

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

/// How this tansu keeps its data, and so how an outage is made.
enum Storage {
    /// `sqlite://` in the temp dir: the process itself is killed and started again.
    Sqlite,
    /// `memory://`: tansu listens on `internal` behind a relay on the public port.
    Memory { internal: u16, relay: Option<Relay> },
}

/// A tansu process of this test, which the test may take down and bring back.
pub struct Tansu {
    /// The port clients use (and tansu advertises).
    port: u16,
    /// Holds the SQLite file (tansu's working directory) and its log.
    dir: TempDir,
    child: Option<Child>,
    storage: Storage,
}

impl Tansu {
    /// Starts a tansu on free ports, with SQLite storage when the binary has it, and waits
    /// until it listens.
    pub async fn start() -> Tansu {
        let mut tansu = Tansu {
            port: free_port(),
            dir: TempDir::new().expect("temp dir for tansu"),
            child: None,
            storage: Storage::Sqlite,
        };
        if tansu.spawn().await.is_ok() {
            return tansu;
        }
        let log = log_tail(&tansu.log_path(), 5);
        assert!(
            log.contains("FeatureNotEnabled") && log.contains("libsql"),
            "tansu did not start; its log:\n{log}"
        );
        tansu.storage = Storage::Memory {
            internal: free_port(),
            relay: None,
        };
        if let Err(log) = tansu.spawn().await {
            panic!(
                "tansu starts neither with sqlite:// nor with memory:// storage: it needs the \
                 libsql or the dynostore feature (cargo install tansu --version 0.6.0 --locked \
                 --features libsql); its log:\n{log}"
            );
        }
        tansu.plug().await;
        tansu
    }

    /// `127.0.0.1:PORT`.
    pub fn brokers(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Whether `take_down` kills the broker process (file-backed storage), rather than cutting
    /// it off behind the relay.
    pub fn kills_the_process(&self) -> bool {
        matches!(self.storage, Storage::Sqlite)
    }

    /// How `take_down` takes the broker away, for the test's report.
    pub fn outage_kind(&self) -> &'static str {
        match self.storage {
            Storage::Sqlite => "tansu process SIGKILLed, restarted on the same port and storage",
            Storage::Memory { .. } => {
                "every connection to tansu cut and its port closed (tansu has memory storage \
                 only, no libsql feature: a killed tansu would forget everything)"
            }
        }
    }

    /// The broker goes away at once, as in a crash. Returns once it is gone.
    pub async fn take_down(&mut self) {
        match &mut self.storage {
            Storage::Sqlite => self.kill(),
            Storage::Memory { relay, .. } => {
                if let Some(relay) = relay.take() {
                    relay.cut().await;
                }
            }
        }
    }

    /// The broker comes back on the same port with the same data; returns once it listens.
    pub async fn bring_back(&mut self) {
        match self.storage {
            Storage::Sqlite => {
                if let Err(log) = self.spawn().await {
                    panic!("tansu did not start again; its log:\n{log}");
                }
            }
            Storage::Memory { .. } => self.plug().await,
        }
    }

    /// Starts the tansu process; `Err(log tail)` if it exits before listening.
    async fn spawn(&mut self) -> Result<(), String> {
        assert!(self.child.is_none(), "tansu is already running");
        let advertised = format!("tcp://127.0.0.1:{}", self.port);
        let (listen_port, storage) = match &self.storage {
            // Relative to the working directory: the temp dir.
            Storage::Sqlite => (self.port, "sqlite://tansu.db"),
            Storage::Memory { internal, .. } => (*internal, "memory://tansu/"),
        };
        let listener = format!("tcp://127.0.0.1:{listen_port}");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("tansu log file");
        let binary = tansu_binary();
        let child = Command::new(&binary)
            .current_dir(self.dir.path())
            .args(["broker", "--listener-url", &listener])
            .args(["--advertised-listener-url", &advertised])
            .args(["--storage-engine", storage])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("tansu log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        self.child = Some(child);
        let addr: SocketAddr = format!("127.0.0.1:{listen_port}").parse().expect("address");
        let deadline = Instant::now() + LISTEN_TIMEOUT;
        loop {
            let probe = tokio::task::spawn_blocking(move || {
                StdStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            });
            if probe.await.unwrap_or(false) {
                return Ok(());
            }
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                self.child = None;
                return Err(format!(
                    "exited with {status}:\n{}",
                    log_tail(&self.log_path(), 30)
                ));
            }
            assert!(
                Instant::now() < deadline,
                "tansu did not listen on {addr} within {LISTEN_TIMEOUT:?}; its log:\n{}",
                log_tail(&self.log_path(), 30)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Opens the relay from the public port to tansu (memory storage only).
    async fn plug(&mut self) {
        let port = self.port;
        if let Storage::Memory { internal, relay } = &mut self.storage {
            assert!(relay.is_none(), "the relay is already open");
            *relay = Some(Relay::open(port, *internal).await);
        }
    }

    fn kill(&mut self) {
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
        if let Storage::Memory { relay, .. } = &mut self.storage
            && let Some(relay) = relay.take()
        {
            relay.task.abort();
        }
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

/// Forwards every connection made to `127.0.0.1:port` to tansu's own port.
struct Relay {
    stop: oneshot::Sender<()>,
    /// Owns the listener and every relayed connection.
    task: JoinHandle<()>,
}

impl Relay {
    async fn open(port: u16, upstream: u16) -> Relay {
        // The port was just released by the previous relay; tokio sets SO_REUSEADDR, so
        // connections of that relay in TIME_WAIT do not keep it busy.
        let deadline = Instant::now() + Duration::from_secs(5);
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => break listener,
                Err(e) => {
                    assert!(Instant::now() < deadline, "relay cannot bind {port}: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        let (stop, mut stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let mut connections = JoinSet::new();
            loop {
                let accepted = tokio::select! {
                    _ = &mut stopped => break,
                    accepted = listener.accept() => accepted,
                };
                let Ok((mut inbound, _)) = accepted else {
                    continue;
                };
                connections.spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(("127.0.0.1", upstream)).await {
                        let _ = inbound.set_nodelay(true);
                        let _ = outbound.set_nodelay(true);
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                // Reap finished connections so the set does not grow for ever.
                while connections.try_join_next().is_some() {}
            }
            drop(listener);
            // Aborts every relayed connection and waits until each is dropped (closed).
            connections.shutdown().await;
        });
        Relay { stop, task }
    }

    /// Closes the port and every relayed connection; returns once they are closed.
    async fn cut(self) {
        let _ = self.stop.send(());
        let _ = self.task.await;
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
    let listener = StdListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address").port()
}
