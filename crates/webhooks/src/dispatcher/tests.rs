//! The dispatcher against real receivers on 127.0.0.1 and a real SQLite store.

use super::*;
use crate::sign::verify;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use cms_store::webhooks::deliveries::DeliveryRecord;
use serde_json::Value;
use sqlx::SqlitePool;
use std::sync::{Arc, Mutex};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// A request a receiver got.
#[derive(Clone, Debug)]
struct Received {
    headers: HeaderMap,
    body: String,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap()
    }
    fn identity(&self) -> String {
        self.json()["resource"]["identity"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// How a receiver answers a request (given those before it): a status, or `None` to hang.
type Answering = Arc<dyn Fn(&Received, usize) -> Option<u16> + Send + Sync>;

#[derive(Clone)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    answering: Answering,
}

async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let got = Received {
        headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
    };
    let before = {
        let mut all = receiver.got.lock().unwrap();
        all.push(got.clone());
        all.len() - 1
    };
    match (receiver.answering)(&got, before) {
        Some(status) => StatusCode::from_u16(status).unwrap(),
        None => {
            tokio::time::sleep(Duration::from_secs(60)).await;
            StatusCode::OK
        }
    }
}

/// A receiver on 127.0.0.1; its URL and what it got.
async fn receiver(answering: Answering) -> (String, Arc<Mutex<Vec<Received>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let app = Router::new()
        .route("/hook", post(receive))
        .with_state(Receiver {
            got: got.clone(),
            answering,
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}/hook"), got)
}

/// A store with a charger on the operators' site, the dispatcher running on it.
struct Fixture {
    store: Store,
    db: SqlitePool,
    team_id: i64,
    stop: CancellationToken,
    _dir: tempfile::TempDir,
}

impl Fixture {
    async fn new(allow_private: bool) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        store.ensure_user("op@example.com").await.unwrap();
        let db = SqlitePool::connect(&format!(
            "sqlite://{}",
            dir.path().join("cms.sqlite3").display()
        ))
        .await
        .unwrap();
        sqlx::query("PRAGMA busy_timeout = 10000")
            .execute(&db)
            .await
            .unwrap();
        for identity in ["cp-1", "cp-2"] {
            let new = cms_store::NewCharger {
                identity: identity.into(),
                ..Default::default()
            };
            store.add_charger(&new).await.unwrap();
        }
        let team_id = sqlx::query_scalar(
            "SELECT s.team_id FROM chargers c JOIN sites s ON s.id = c.site_id LIMIT 1",
        )
        .fetch_one(&db)
        .await
        .unwrap();
        let mut config = DispatcherConfig::new("test-node", allow_private);
        config.attempt_timeout = Duration::from_secs(1);
        config.poll = Duration::from_millis(50);
        config.retry_delays = vec![Duration::from_millis(200), Duration::from_millis(200)];
        let stop = CancellationToken::new();
        tokio::spawn(run(store.clone(), config, stop.clone()));
        Fixture {
            store,
            db,
            team_id,
            stop,
            _dir: dir,
        }
    }

    /// A webhook of the team to `url` for `charger.connected`; its uuid.
    async fn webhook(&self, url: &str) -> String {
        let uuid = format!("wh-{}", url.len());
        sqlx::query(
            "INSERT INTO webhooks (uuid, team_id, url, event_types, secret, created_at, updated_at)
             VALUES ($1, $2, $3, '[\"charger.connected\"]', $4, 'now', 'now')",
        )
        .bind(&uuid)
        .bind(self.team_id)
        .bind(url)
        .bind(SECRET)
        .execute(&self.db)
        .await
        .unwrap();
        uuid
    }

    /// A `charger.connected` event of charger `identity`, numbered `n` in its data.
    async fn event(&self, identity: &str, n: usize) {
        sqlx::query(
            "INSERT INTO webhook_events (event_id, type, subject, team_id, site_id, charger_id,
               data, occurred_at, received_at, created_at)
             SELECT $1, 'charger.connected', c.identity, s.team_id, s.id, c.id, $2, $3, $3, $3
             FROM chargers c JOIN sites s ON s.id = c.site_id WHERE c.identity = $4",
        )
        .bind(format!("evt_{identity}_{n}"))
        .bind(format!(
            r#"{{"charger_uuid":"u","identity":"{identity}","n":{n}}}"#
        ))
        .bind(format_record_time(Utc::now()))
        .bind(identity)
        .execute(&self.db)
        .await
        .unwrap();
    }

    async fn log(&self, webhook: &str) -> Vec<DeliveryRecord> {
        self.store
            .webhook_deliveries(self.team_id, webhook, 100, 0)
            .await
            .unwrap()
            .unwrap()
            .0
    }

    /// Waits (up to 20 s) until the webhook's log satisfies `done`; the log.
    async fn log_until(
        &self,
        webhook: &str,
        done: impl Fn(&[DeliveryRecord]) -> bool,
    ) -> Vec<DeliveryRecord> {
        for _ in 0..400 {
            let log = self.log(webhook).await;
            if done(&log) {
                return log;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the log never got there: {:#?}", self.log(webhook).await);
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn delivered(log: &[DeliveryRecord]) -> bool {
    !log.is_empty() && log.iter().all(|d| d.state == "delivered")
}

#[tokio::test]
async fn a_delivery_arrives_signed_as_the_standard_says() {
    let (url, got) = receiver(Arc::new(|_, _| Some(204))).await;
    let f = Fixture::new(true).await;
    let webhook = f.webhook(&url).await;
    f.event("cp-1", 1).await;
    f.log_until(&webhook, delivered).await;
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    let request = &got[0];
    let header = |name: &str| request.headers[name].to_str().unwrap().to_string();
    assert_eq!(header("webhook-id"), "evt_cp-1_1");
    assert_eq!(header("content-type"), "application/json");
    assert!(header("user-agent").starts_with("cms-webhooks/"));
    let timestamp: i64 = header("webhook-timestamp").parse().unwrap();
    assert!((Utc::now().timestamp() - timestamp).abs() < 300);
    let signature = header("webhook-signature");
    assert!(verify(
        SECRET,
        "evt_cp-1_1",
        timestamp,
        request.body.as_bytes(),
        &signature
    ));
    // The specification's layout, by hand: `v1,` then base64 of HMAC-SHA256 over
    // `{id}.{timestamp}.{body}` keyed by the secret's decoded bytes.
    let expected = crate::sign::sign(SECRET, "evt_cp-1_1", timestamp, request.body.as_bytes());
    assert_eq!(signature, expected);
    assert_eq!(
        signature.split_once(',').unwrap().1.len(),
        44,
        "a base64 SHA-256"
    );
    let body = request.json();
    assert_eq!(body["type"], "charger.connected");
    assert_eq!(body["data"]["n"], 1);
}

#[tokio::test]
async fn a_failed_attempt_is_retried_and_the_log_shows_both() {
    let (url, got) = receiver(Arc::new(|_, before| {
        Some(if before == 0 { 500 } else { 200 })
    }))
    .await;
    let f = Fixture::new(true).await;
    let webhook = f.webhook(&url).await;
    f.event("cp-1", 1).await;
    let log = f.log_until(&webhook, delivered).await;
    assert_eq!(got.lock().unwrap().len(), 2);
    let ids: Vec<String> = got
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.headers["webhook-id"].to_str().unwrap().to_string())
        .collect();
    assert_eq!(ids[0], ids[1], "the same webhook-id on every attempt");
    assert_eq!(log[0].attempts, 2);
    let statuses: Vec<Option<i64>> = log[0].attempt_log.iter().map(|a| a.status_code).collect();
    assert_eq!(statuses, [Some(500), Some(200)]);
}

#[tokio::test]
async fn a_receiver_that_hangs_is_cut_at_the_time_out() {
    let (url, _got) = receiver(Arc::new(
        |_, before| if before == 0 { None } else { Some(200) },
    ))
    .await;
    let f = Fixture::new(true).await;
    let webhook = f.webhook(&url).await;
    f.event("cp-1", 1).await;
    let log = f.log_until(&webhook, delivered).await;
    let first = &log[0].attempt_log[0];
    assert_eq!(
        (first.status_code, first.error.as_deref()),
        (None, Some("timed out"))
    );
    assert!(
        first.latency_ms >= 1000,
        "cut at the time-out, not before: {}",
        first.latency_ms
    );
}

#[tokio::test]
async fn a_410_disables_the_webhook() {
    let (url, got) = receiver(Arc::new(|_, _| Some(410))).await;
    let f = Fixture::new(true).await;
    let webhook = f.webhook(&url).await;
    f.event("cp-1", 1).await;
    f.event("cp-1", 2).await;
    let log = f
        .log_until(&webhook, |log| log.iter().any(|d| d.attempts == 1))
        .await;
    let (enabled, reason): (i64, Option<String>) =
        sqlx::query_as("SELECT enabled, disabled_reason FROM webhooks")
            .fetch_one(&f.db)
            .await
            .unwrap();
    assert_eq!((enabled, reason.as_deref()), (0, Some("gone")));
    assert!(log.iter().all(|d| d.state == "pending"), "kept pending");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(got.lock().unwrap().len(), 1, "nothing more sent");
}

#[tokio::test]
async fn a_private_address_is_refused_without_allow_private() {
    let (url, got) = receiver(Arc::new(|_, _| Some(200))).await;
    let f = Fixture::new(false).await;
    let webhook = f.webhook(&url).await;
    f.event("cp-1", 1).await;
    let log = f
        .log_until(&webhook, |log| log.iter().any(|d| d.attempts >= 1))
        .await;
    let error = log[0].attempt_log[0].error.clone().unwrap();
    assert!(error.contains("loopback"), "{error}");
    assert!(got.lock().unwrap().is_empty());
}

#[tokio::test]
async fn order_per_subject_holds_while_another_subject_fails() {
    let (url, got) = receiver(Arc::new(|r: &Received, _| {
        Some(if r.identity() == "cp-2" { 500 } else { 200 })
    }))
    .await;
    let f = Fixture::new(true).await;
    let webhook = f.webhook(&url).await;
    for n in 0..10 {
        f.event("cp-2", n).await;
        f.event("cp-1", n).await;
    }
    f.log_until(&webhook, |log| {
        log.iter().filter(|d| d.state == "delivered").count() == 10
    })
    .await;
    let got = got.lock().unwrap().clone();
    let cp1: Vec<i64> = got
        .iter()
        .filter(|r| r.identity() == "cp-1")
        .map(|r| r.json()["data"]["n"].as_i64().unwrap())
        .collect();
    assert_eq!(
        cp1,
        (0..10).collect::<Vec<_>>(),
        "cp-1's in order, each once"
    );
    let cp2: Vec<i64> = got
        .iter()
        .filter(|r| r.identity() == "cp-2")
        .map(|r| r.json()["data"]["n"].as_i64().unwrap())
        .collect();
    assert_eq!(cp2.first(), Some(&0));
    assert!(
        cp2.windows(2).all(|pair| pair[0] <= pair[1]),
        "cp-2's in order, each retried before the next: {cp2:?}"
    );
}
