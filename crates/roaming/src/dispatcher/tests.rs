//! The dispatcher against real parties' receivers on 127.0.0.1 and a real SQLite store, with
//! test-sized delays. Events become pushes by a translator of the tests' own (one PATCH of
//! `location:{subject}` per event and party): the modules' translators are tested beside them.

use super::*;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::routing::any;
use cms_store::ocpi::parties::{Party, PartyConnection};
use cms_store::ocpi::pushes::PushRecord;
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};
use cms_store::providers::NewProvider;
use sqlx::SqlitePool;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use tokio::task::JoinHandle;

/// A request a receiver got.
#[derive(Clone, Debug)]
struct Received {
    method: Method,
    path: String,
    headers: HeaderMap,
    body: String,
    at: Instant,
}

impl Received {
    fn header(&self, name: &str) -> String {
        self.headers[name].to_str().unwrap().to_string()
    }
}

/// How a receiver answers a request (given how many came before it): a status and a body.
type Answering = Arc<dyn Fn(&Received, usize) -> (u16, String) + Send + Sync>;

fn ocpi(code: u32) -> String {
    format!(
        r#"{{"status_code":{code},"status_message":"as told","timestamp":"2026-11-24T12:00:00Z"}}"#
    )
}

fn taken() -> Answering {
    Arc::new(|_, _| (200, ocpi(1000)))
}

#[derive(Clone)]
struct Receiver {
    got: Arc<Mutex<Vec<Received>>>,
    answering: Answering,
}

async fn receive(
    State(receiver): State<Receiver>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    let got = Received {
        method,
        path: uri.path().to_string(),
        headers,
        body: String::from_utf8(body.to_vec()).unwrap(),
        at: Instant::now(),
    };
    let before = {
        let mut all = receiver.got.lock().unwrap();
        all.push(got.clone());
        all.len() - 1
    };
    let (status, body) = (receiver.answering)(&got, before);
    (StatusCode::from_u16(status).unwrap(), body)
}

/// A party's receiver on 127.0.0.1: its base URL and what it got.
async fn receiver(answering: Answering) -> (String, Arc<Mutex<Vec<Received>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let app = Router::new()
        .route("/{*rest}", any(receive))
        .with_state(Receiver {
            got: got.clone(),
            answering,
        });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (format!("http://{address}/emsp/2.2.1"), got)
}

/// One push per event and party: `location:{subject}`, its data as the body.
fn per_event<'a>(
    _store: &'a Store,
    event: &'a OutboxEvent,
    party: &'a Party,
) -> Pin<Box<dyn Future<Output = cms_store::Result<Vec<NewPush>>> + Send + 'a>> {
    Box::pin(async move {
        Ok(vec![NewPush {
            provider_id: party.provider_id,
            object_key: format!("location:{}", event.subject),
            module: "locations".into(),
            method: "PATCH".into(),
            path: format!("/NL/CMS/{}", event.subject),
            body: Some(event.data.to_string()),
        }])
    })
}

/// A store, with dispatchers started on it.
struct Fixture {
    store: Store,
    db: SqlitePool,
    allow_private: bool,
    running: Vec<(CancellationToken, JoinHandle<()>)>,
    _dir: tempfile::TempDir,
}

impl Fixture {
    async fn new(allow_private: bool) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        let path = dir.path().join("cms.sqlite3");
        let db = SqlitePool::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        sqlx::query("PRAGMA busy_timeout = 10000")
            .execute(&db)
            .await
            .unwrap();
        Fixture {
            store,
            db,
            allow_private,
            running: Vec::new(),
            _dir: dir,
        }
    }

    /// Starts a dispatcher named `node`.
    fn start(&mut self, node: &str) {
        let mut config = DispatcherConfig::new(node, self.allow_private);
        config.push_timeout = Duration::from_secs(2);
        config.poll = Duration::from_millis(50);
        config.retry_delays = vec![Duration::from_millis(300), Duration::from_millis(300)];
        config.translate = per_event;
        let stop = CancellationToken::new();
        let task = tokio::spawn(run(self.store.clone(), config, stop.clone()));
        self.running.push((stop, task));
    }

    /// Stops the dispatchers and waits for them to end.
    async fn stop(&mut self) {
        for (stop, task) in self.running.drain(..) {
            stop.cancel();
            task.await.unwrap();
        }
    }

    /// A team (CPO NL*CMS) with a provider (DE*EMP) registered over OCPI, calling cms with
    /// `out-{name}`, its locations RECEIVER at `{base}/locations`; (team id, provider id).
    async fn party(&self, name: &str, base: &str) -> (i64, i64) {
        let team: i64 = sqlx::query_scalar(
            "INSERT INTO teams (uuid, name, type, created_at, updated_at)
             VALUES ($1, $2, 'organization', 'now', 'now') RETURNING id",
        )
        .bind(format!("team-{name}"))
        .bind(name)
        .fetch_one(&self.db)
        .await
        .unwrap();
        sqlx::query(
            "INSERT INTO ocpi_cpo (team_id, country_code, party_id, name, updated_at)
             VALUES ($1, 'NL', 'CMS', 'cms', 'now')",
        )
        .bind(team)
        .execute(&self.db)
        .await
        .unwrap();
        let new = NewProvider {
            name: name.into(),
            country_code: "DE".into(),
            party_id: "EMP".into(),
            tariff_id: None,
        };
        let provider = self.store.create_provider(team, &new).await.unwrap();
        let endpoints = serde_json::json!([
            {"identifier": "locations", "role": "RECEIVER", "url": format!("{base}/locations")},
            {"identifier": "tokens", "role": "SENDER", "url": format!("{base}/tokens")},
        ]);
        let connection = PartyConnection {
            incoming_token_hash: cms_store::ocpi::token_hash(&format!("in-{name}")),
            outgoing_token: Some(format!("out-{name}")),
            status: "registered".into(),
            versions_url: Some(format!("{base}/versions")),
            endpoints: Some(endpoints.to_string()),
            roles: None,
        };
        let store = &self.store;
        store
            .ocpi_save_party(provider.id, &connection)
            .await
            .unwrap();
        (team, provider.id)
    }

    async fn enqueue(&self, pushes: &[NewPush]) {
        self.store.enqueue_ocpi_pushes(pushes).await.unwrap();
    }

    /// An event of `team` about `subject`, numbered `n` in its data, settled at once.
    async fn event(&self, team: i64, subject: &str, n: usize) {
        sqlx::query(
            "INSERT INTO webhook_events (event_id, type, subject, team_id, data, occurred_at,
               received_at, created_at)
             VALUES ($1, 'connector.status_changed', $2, $3, $4, $5, $5, '2026-01-01T00:00:00Z')",
        )
        .bind(format!("evt_{subject}_{n}"))
        .bind(subject)
        .bind(team)
        .bind(format!(r#"{{"n":{n}}}"#))
        .bind(format_record_time(Utc::now()))
        .execute(&self.db)
        .await
        .unwrap();
    }

    async fn log(&self, provider: i64) -> Vec<PushRecord> {
        let log = self.store.ocpi_pushes_of_provider(provider, 100, 0);
        log.await.unwrap().0
    }

    /// Waits (up to 20 s) until the provider's log satisfies `done`; the log, oldest first.
    async fn log_until(
        &self,
        provider: i64,
        done: impl Fn(&[PushRecord]) -> bool,
    ) -> Vec<PushRecord> {
        for _ in 0..400 {
            let mut log = self.log(provider).await;
            log.reverse();
            if done(&log) {
                return log;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the log never got there: {:#?}", self.log(provider).await);
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        for (stop, _) in &self.running {
            stop.cancel();
        }
    }
}

fn push(provider_id: i64, object: &str, n: usize) -> NewPush {
    NewPush {
        provider_id,
        object_key: format!("location:{object}"),
        module: "locations".into(),
        method: "PUT".into(),
        path: format!("/NL/CMS/{object}"),
        body: Some(format!(r#"{{"n":{n}}}"#)),
    }
}

fn settled(log: &[PushRecord]) -> bool {
    !log.is_empty() && log.iter().all(|p| p.state != "pending")
}

/// The `n` of each request the receiver got for `object`, in the order it got them.
fn numbers(got: &Mutex<Vec<Received>>, object: &str) -> Vec<i64> {
    let got = got.lock().unwrap();
    let of_object = got
        .iter()
        .filter(|r| r.path.ends_with(&format!("/{object}")));
    let body = |r: &Received| serde_json::from_str::<serde_json::Value>(&r.body).unwrap();
    of_object.map(|r| body(r)["n"].as_i64().unwrap()).collect()
}

#[tokio::test]
async fn a_push_goes_to_the_partys_receiver_with_the_ocpi_headers() {
    let (base, got) = receiver(taken()).await;
    let mut f = Fixture::new(true).await;
    let (_, provider) = f.party("a", &base).await;
    f.enqueue(&[push(provider, "loc-1", 1)]).await;
    f.start("node-1");
    let log = f.log_until(provider, settled).await;
    assert_eq!((log[0].state.as_str(), log[0].attempts), ("delivered", 1));
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    let request = &got[0];
    assert_eq!(request.method, Method::PUT);
    assert_eq!(request.path, "/emsp/2.2.1/locations/NL/CMS/loc-1");
    assert_eq!(request.body, r#"{"n":1}"#);
    // The outgoing token `out-a`, base64 as OCPI 2.2.1 sends it.
    assert_eq!(request.header("authorization"), "Token b3V0LWE=");
    assert_eq!(request.header("content-type"), "application/json");
    for id in ["x-request-id", "x-correlation-id"] {
        assert!(uuid::Uuid::parse_str(&request.header(id)).is_ok(), "{id}");
    }
    let identities = ["ocpi-from-country-code", "ocpi-from-party-id"].map(|h| request.header(h));
    assert_eq!(identities, ["NL", "CMS"]);
    let identities = ["ocpi-to-country-code", "ocpi-to-party-id"].map(|h| request.header(h));
    assert_eq!(identities, ["DE", "EMP"]);
}

#[tokio::test]
async fn a_failed_attempt_is_retried_after_its_back_off() {
    let (base, got) = receiver(Arc::new(|_, before| match before {
        0 => (503, "busy".into()),
        _ => (200, ocpi(1000)),
    }))
    .await;
    let mut f = Fixture::new(true).await;
    let (_, provider) = f.party("a", &base).await;
    f.enqueue(&[push(provider, "loc-1", 1)]).await;
    f.start("node-1");
    let log = f.log_until(provider, settled).await;
    assert_eq!((log[0].state.as_str(), log[0].attempts), ("delivered", 2));
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 2);
    // 300 ms less the jitter's 20% at least.
    let waited = got[1].at - got[0].at;
    assert!(waited >= Duration::from_millis(240), "{waited:?}");
    let ids = |name: &str| got.iter().map(|r| r.header(name)).collect::<Vec<_>>();
    assert_eq!(
        ids("x-correlation-id")[0],
        ids("x-correlation-id")[1],
        "one per push"
    );
    assert_ne!(
        ids("x-request-id")[0],
        ids("x-request-id")[1],
        "one per attempt"
    );
}

#[tokio::test]
async fn an_ocpi_error_is_a_failure_and_after_the_last_retry_the_next_push_goes() {
    // HTTP 200 with an OCPI client error (2001) for the first push, success for the second.
    let (base, got) = receiver(Arc::new(|r: &Received, _| {
        (
            200,
            ocpi(if r.body.contains("\"n\":1") {
                2001
            } else {
                1000
            }),
        )
    }))
    .await;
    let mut f = Fixture::new(true).await;
    let (_, provider) = f.party("a", &base).await;
    f.enqueue(&[push(provider, "loc-1", 1), push(provider, "loc-1", 2)])
        .await;
    f.start("node-1");
    let log = f.log_until(provider, settled).await;
    assert_eq!((log[0].state.as_str(), log[0].attempts), ("failed", 3));
    let error = log[0].last_error.clone().unwrap();
    assert!(error.contains("OCPI status 2001"), "{error}");
    assert_eq!((log[1].state.as_str(), log[1].attempts), ("delivered", 1));
    assert_eq!(
        numbers(&got, "loc-1"),
        [1, 1, 1, 2],
        "the second after the first's retries"
    );
}

#[tokio::test]
async fn an_objects_pushes_go_in_order_while_another_objects_fail() {
    let (base, got) = receiver(Arc::new(|r: &Received, _| match r.path.ends_with("/bad") {
        true => (500, "down".into()),
        false => (200, ocpi(1000)),
    }))
    .await;
    let mut f = Fixture::new(true).await;
    let (_, provider) = f.party("a", &base).await;
    for n in 0..10 {
        f.enqueue(&[push(provider, "bad", n), push(provider, "good", n)])
            .await;
    }
    f.start("node-1");
    f.log_until(provider, |log| {
        log.iter().filter(|p| p.state == "delivered").count() == 10
    })
    .await;
    let good = numbers(&got, "good");
    assert_eq!(good, (0..10).collect::<Vec<_>>(), "in order, each once");
    let bad = numbers(&got, "bad");
    assert_eq!(bad.first(), Some(&0));
    assert!(bad.windows(2).all(|w| w[0] <= w[1]), "in order: {bad:?}");
}

#[tokio::test]
async fn events_become_pushes_for_the_parties_of_their_team_only() {
    let (base_a, got_a) = receiver(taken()).await;
    let (base_b, got_b) = receiver(taken()).await;
    let mut f = Fixture::new(true).await;
    let (team_a, provider_a) = f.party("a", &base_a).await;
    let (_, provider_b) = f.party("b", &base_b).await;
    f.start("node-1");
    f.event(team_a, "loc-1", 1).await;
    f.event(team_a, "loc-1", 2).await;
    f.log_until(provider_a, |log| log.len() == 2 && settled(log))
        .await;
    assert_eq!(numbers(&got_a, "loc-1"), [1, 2]);
    assert!(f.log(provider_b).await.is_empty());
    assert!(got_b.lock().unwrap().is_empty(), "another team's party");
}

#[tokio::test]
async fn a_restarted_dispatcher_goes_on_where_it_stopped() {
    // The first attempt fails; the retry (after the restart) is taken.
    let (base, got) = receiver(Arc::new(|_, before| match before {
        0 => (200, ocpi(3000)),
        _ => (200, ocpi(1000)),
    }))
    .await;
    let mut f = Fixture::new(true).await;
    let (team, provider) = f.party("a", &base).await;
    f.start("before");
    f.event(team, "loc-1", 1).await;
    f.log_until(provider, |log| log.len() == 1 && log[0].attempts == 1)
        .await;
    f.stop().await;
    f.start("after");
    f.event(team, "loc-1", 2).await;
    let log = f
        .log_until(provider, |log| log.len() == 2 && settled(log))
        .await;
    let attempts: Vec<i64> = log.iter().map(|p| p.attempts).collect();
    assert_eq!(
        attempts,
        [2, 1],
        "the retry went on, the event was not made again"
    );
    assert_eq!(numbers(&got, "loc-1"), [1, 1, 2]);
}

#[tokio::test]
async fn a_push_the_party_cannot_take_fails_at_once_and_a_url_push_goes_to_its_address() {
    let (base, got) = receiver(taken()).await;
    let mut f = Fixture::new(true).await;
    let (_, provider) = f.party("a", &base).await;
    let mut no_endpoint = push(provider, "cdr-1", 1);
    no_endpoint.module = "cdrs".into();
    let mut response = push(provider, "command-1", 2);
    response.module = "url".into();
    response.method = "POST".into();
    response.path = format!("{base}/commands/START_SESSION/42");
    f.enqueue(&[no_endpoint, response]).await;
    f.start("node-1");
    let log = f.log_until(provider, settled).await;
    assert_eq!((log[0].state.as_str(), log[0].attempts), ("failed", 1));
    let error = log[0].last_error.clone().unwrap();
    assert!(error.contains("no cdrs RECEIVER endpoint"), "{error}");
    assert_eq!(log[1].state, "delivered");
    let got = got.lock().unwrap().clone();
    let paths: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, ["/emsp/2.2.1/commands/START_SESSION/42"]);
}

#[tokio::test]
async fn a_private_address_is_refused_without_allow_private() {
    let (base, got) = receiver(taken()).await;
    let mut f = Fixture::new(false).await;
    let (_, provider) = f.party("a", &base).await;
    let mut loopback = push(provider, "command-1", 2);
    loopback.module = "url".into();
    loopback.path = "https://127.0.0.1:9/commands/START_SESSION/42".into();
    f.enqueue(&[push(provider, "loc-1", 1), loopback]).await;
    f.start("node-1");
    let tried = |log: &[PushRecord]| log.len() == 2 && log.iter().all(|p| p.attempts >= 1);
    let log = f.log_until(provider, tried).await;
    let errors: Vec<String> = log.iter().map(|p| p.last_error.clone().unwrap()).collect();
    assert!(
        errors[0].contains("plain http needs --ocpi-allow-private"),
        "{errors:?}"
    );
    assert!(errors[1].contains("a loopback address"), "{errors:?}");
    assert!(got.lock().unwrap().is_empty());
}
