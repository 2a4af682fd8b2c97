//! The Kafka broker the tests run against: `CMS_TEST_KAFKA_BROKERS` when set, otherwise a tansu
//! started here (`CMS_TEST_TANSU` names the binary, default `tansu` on PATH or in
//! ~/.cargo/bin; `CMS_TEST_TANSU_STORAGE` its storage engine, default in-memory).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Broker {
    pub brokers: String,
    /// Our own tansu, if we started one: (port, process).
    own: Option<(u16, Option<Child>)>,
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
        let mut broker = Broker {
            brokers: format!("127.0.0.1:{port}"),
            own: Some((port, None)),
        };
        broker.start();
        broker
    }

    /// Starts our tansu (again, on the same port) and waits until it accepts connections.
    pub fn start(&mut self) {
        let Some((port, child)) = &mut self.own else {
            panic!("cannot start a broker this test did not start");
        };
        assert!(child.is_none(), "tansu is already running");
        let url = format!("tcp://127.0.0.1:{port}");
        let storage = std::env::var("CMS_TEST_TANSU_STORAGE")
            .unwrap_or_else(|_| "memory://tansu/".to_owned());
        let log_path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tansu-{port}.log"));
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .expect("tansu log file");
        let spawned = Command::new(tansu_binary())
            .args(["broker", "--listener-url", &url])
            .args(["--advertised-listener-url", &url])
            .args(["--storage-engine", &storage])
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("tansu log file"))
            .stderr(log)
            .spawn()
            .expect("start tansu");
        *child = Some(spawned);
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = child.as_mut().unwrap().try_wait().unwrap() {
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
        if let Some((_, child)) = &mut self.own
            && let Some(mut child) = child.take()
        {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
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
             (cargo install tansu --version 0.6.0 --locked) or point CMS_TEST_TANSU at it"
        )
    })
}

fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().unwrap().port()
}
