//! `/readyz` answers from memory (docs/operations.md "Probes and metrics"): the store is pinged
//! by a background check, never by a probe, so probes are answered at once even while the
//! store hangs, and a flood of them costs the store nothing. The store is PostgreSQL behind a
//! relay of the test that can stall: it holds every byte until resumed, as a hung server does.

use crate::support::{Api, Cms, eventually};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readyz_is_answered_from_memory_while_the_store_hangs() {
    let Some(server) = cms_store::testing::postgres_url() else {
        return;
    };
    let url = cms_store::testing::fresh_schema(&server)
        .await
        .expect("a schema");
    // postgres://user@HOST:PORT/db?...: the relay takes HOST:PORT's place.
    let (before, rest) = url.split_once('@').expect("a user in the URL");
    let (upstream, after) = rest.split_once('/').expect("a database in the URL");
    let relay = StallingRelay::open(upstream.to_string()).await;
    let cms = Cms::up_on_database(&format!("{before}@{}/{after}", relay.addr)).await;
    let probe = Api::new(&cms, "none");
    assert_eq!(probe.get_authorized("/readyz", None).await.status, 200);

    relay.stall();
    // Each probe is answered (Api's client gives up after a few seconds): from memory, 200
    // until the background ping fails, then 503.
    eventually("/readyz 503 while the store hangs", async || {
        let answer = probe.get_authorized("/readyz", None).await;
        match answer.status {
            503 => Ok(()),
            _ => Err(format!("{}: {}", answer.status, answer.body)),
        }
    })
    .await;
    for _ in 0..200 {
        let answer = probe.get_authorized("/readyz", None).await;
        assert_eq!(answer.status, 503, "{}", answer.body);
    }

    relay.resume();
    eventually("/readyz 200 once the store answers again", async || {
        let answer = probe.get_authorized("/readyz", None).await;
        match answer.status {
            200 => Ok(()),
            _ => Err(format!("{}: {}", answer.status, answer.body)),
        }
    })
    .await;
}

/// Forwards connections to `upstream`; while stalled, holds what either side sends.
struct StallingRelay {
    addr: String,
    stalled: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl StallingRelay {
    async fn open(upstream: String) -> StallingRelay {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("address").to_string();
        let stalled = watch::Sender::new(false);
        let stalls = stalled.clone();
        let task = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let Ok(outbound) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                let (from_client, to_client) = inbound.into_split();
                let (from_server, to_server) = outbound.into_split();
                tokio::spawn(forward(from_client, to_server, stalls.subscribe()));
                tokio::spawn(forward(from_server, to_client, stalls.subscribe()));
            }
        });
        StallingRelay {
            addr,
            stalled,
            task,
        }
    }

    fn stall(&self) {
        self.stalled.send_replace(true);
    }

    fn resume(&self) {
        self.stalled.send_replace(false);
    }
}

impl Drop for StallingRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut stalled: watch::Receiver<bool>,
) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if stalled.wait_for(|stalled| !*stalled).await.is_err() {
            return;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}
