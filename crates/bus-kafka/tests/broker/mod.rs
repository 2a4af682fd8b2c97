//! The Kafka broker the tests run against: `CMS_TEST_KAFKA_BROKERS` when set, otherwise a tansu
//! started here (`CMS_TEST_TANSU` names the binary, default `tansu` on PATH or in
//! ~/.cargo/bin; `CMS_TEST_TANSU_STORAGE` its storage engine, default in-memory). Plus a TCP
//! proxy, to cut clients off a broker without the broker losing anything.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

pub struct Broker {
    /// What clients bootstrap from.
    pub brokers: String,
    /// Our own tansu, if we started one.
    own: Option<Own>,
}

struct Own {
    port: u16,
    /// The address tansu tells clients to use: its own, or a proxy's in front of it.
    advertised_port: u16,
    child: Option<Child>,
}

impl Broker {
    /// The shared broker from the environment, or a tansu of our own.
    pub fn get() -> Broker {
        if let Ok(brokers) = std::env::var("CMS_TEST_KAFKA_BROKERS") {
            return Broker { brokers, own: None };
        }
        if std::env::var_os("CI").is_some() {
            panic!("CMS_TEST_KAFKA_BROKERS must name a Kafka broker when CI is set");
        }
        Broker::own()
    }

    /// A tansu of our own, which the test may stop and restart.
    pub fn own() -> Broker {
        let port = free_port();
        Broker::own_advertising(port, port)
    }

    /// A tansu of our own that sends clients to `advertised_port` (a proxy's) after bootstrap.
    pub fn own_advertising(port: u16, advertised_port: u16) -> Broker {
        let mut broker = Broker {
            brokers: format!("127.0.0.1:{advertised_port}"),
            own: Some(Own {
                port,
                advertised_port,
                child: None,
            }),
        };
        broker.start();
        broker
    }

    /// Starts our tansu (again, on the same port) and waits until it accepts connections.
    pub fn start(&mut self) {
        let Some(own) = &mut self.own else {
            panic!("cannot start a broker this test did not start");
        };
        assert!(own.child.is_none(), "tansu is already running");
        let port = own.port;
        let listener = format!("tcp://127.0.0.1:{port}");
        let advertised = format!("tcp://127.0.0.1:{}", own.advertised_port);
        let storage = std::env::var("CMS_TEST_TANSU_STORAGE")
            .unwrap_or_else(|_| "memory://tansu/".to_owned());
        let log_path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tansu-{port}.log"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("tansu log file");
        let child = own.child.insert(
            Command::new(tansu_binary())
                .args(["broker", "--listener-url", &listener])
                .args(["--advertised-listener-url", &advertised])
                .args(["--storage-engine", &storage])
                .stdin(Stdio::null())
                .stdout(log.try_clone().expect("tansu log file"))
                .stderr(log)
                .spawn()
                .expect("start tansu"),
        );
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                // A default `cargo install tansu` lacks the in-memory engine: say how to get it.
                panic!(
                    "tansu exited at start with {status} (an in-memory tansu needs \
                     `cargo install tansu --version 0.6.0 --locked --features dynostore`); \
                     its log {}:\n{log}",
                    log_path.display()
                );
            }
            assert!(
                Instant::now() < deadline,
                "tansu did not listen within 15 s"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills our tansu (its in-memory data is lost).
    pub fn stop(&mut self) {
        if let Some(Own {
            child: Some(child), ..
        }) = &mut self.own
        {
            let _ = child.kill();
            let _ = child.wait();
        }
        if let Some(own) = &mut self.own {
            own.child = None;
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Forwards connections from `port` to a broker; `stop` drops the listener and every
/// connection, as a network outage would.
pub struct Proxy {
    pub port: u16,
    target: SocketAddr,
    tasks: Option<JoinSet<()>>,
}

impl Proxy {
    /// A proxy on a free port, not yet started (the broker behind it needs its port first).
    pub fn new(target_port: u16) -> Proxy {
        Proxy {
            port: free_port(),
            target: format!("127.0.0.1:{target_port}").parse().unwrap(),
            tasks: None,
        }
    }

    pub async fn start(&mut self) {
        assert!(self.tasks.is_none(), "proxy already running");
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", self.port))
            .await
            .expect("proxy port");
        let target = self.target;
        let mut tasks = JoinSet::new();
        tasks.spawn(async move {
            // Connections live in this set: aborting the accept task drops them all.
            let mut connections = JoinSet::new();
            while let Ok((mut client, _)) = listener.accept().await {
                connections.spawn(async move {
                    if let Ok(mut broker) = tokio::net::TcpStream::connect(target).await {
                        let _ = tokio::io::copy_bidirectional(&mut client, &mut broker).await;
                    }
                });
            }
        });
        self.tasks = Some(tasks);
    }

    pub async fn stop(&mut self) {
        if let Some(mut tasks) = self.tasks.take() {
            tasks.shutdown().await;
        }
    }
}

fn tansu_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("CMS_TEST_TANSU") {
        return path.into();
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("tansu"))
        .find(|p| p.is_file());
    let in_cargo_home = std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cargo/bin/tansu"))
        .filter(|p| p.is_file());
    on_path.or(in_cargo_home).unwrap_or_else(|| {
        panic!(
            "no Kafka broker: set CMS_TEST_KAFKA_BROKERS, or install tansu \
             (cargo install tansu --version 0.6.0 --locked --features dynostore) \
             or point CMS_TEST_TANSU at it"
        )
    })
}

pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().unwrap().port()
}
