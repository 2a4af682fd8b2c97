//! OCPI tokens whose whitelist asks their eMSP: which Authorizes wait for it, and what comes of
//! asking, against real sockets on loopback (an eMSP that refuses connections, one that never
//! answers, one that answers a fixed HTTP response).

use super::*;
use chrono::TimeZone;
use cms_bus::{IdTagEntry, OcpiLocation, PartyLinkEntry, Registration, RegistryState, TokenTerms};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The team holding the provider's tags.
const PROVIDER: i64 = 20;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 24, 12, 0, 0).unwrap()
}

/// CP-1 at a site of team 10 whose provider's tags (team 20) apply; CP-NOWHERE the same
/// without an OCPI location.
fn authority(timeout: Duration) -> (Authority, Arc<IdTagDirectory>) {
    let registry = Arc::new(RegistryDirectory::default());
    for (identity, location) in [("CP-1", true), ("CP-NOWHERE", false)] {
        let registration = Registration {
            password_hash: None,
            security_profile: 0,
            authorization: SiteAuthorization::IdTags {
                teams: vec![10, PROVIDER].into(),
            },
            proxy: None,
            price_text: None,
            ocpi_location: location.then(|| {
                Box::new(OcpiLocation {
                    location_id: "site-uuid".into(),
                    evse_uid: "charger-uuid".into(),
                })
            }),
        };
        registry.apply_state(identity, RegistryState::Registered(registration));
    }
    let tags = Arc::new(IdTagDirectory::default());
    let authority = Authority::new(registry, tags.clone()).with_authorize_timeout(timeout);
    (authority, tags)
}

fn token(tags: &IdTagDirectory, uid: &str, whitelist: &str, status: IdTagStatus) {
    let entry = IdTagEntry {
        team_id: PROVIDER,
        id_tag: uid.into(),
        status,
        expiry_date: None,
        parent_id_tag: None,
        ocpi: Some(TokenTerms {
            token_type: "RFID".into(),
            whitelist: whitelist.into(),
        }),
    };
    tags.apply(PROVIDER, &uid.to_ascii_uppercase(), Some(&entry));
}

fn link(tags: &IdTagDirectory, url: &str) {
    let link = PartyLinkEntry {
        tokens_url: url.into(),
        token: "cms-token".into(),
    };
    tags.apply_party(PROVIDER, Some(link));
}

/// The status answered now, or `None` when the eMSP is to be asked first.
fn at_once(authority: &Authority, identity: &str, tag: &str) -> Option<&'static str> {
    match authority.authorize_or_ask(identity, tag, now()) {
        Authorized::Now(verdict) => Some(verdict.status),
        Authorized::Ask(_) => None,
    }
}

#[test]
fn only_tokens_whose_whitelist_asks_wait_for_their_emsp() {
    let (authority, tags) = authority(AUTHORIZE_TIMEOUT);
    token(&tags, "always", "ALWAYS", IdTagStatus::Accepted);
    token(&tags, "allowed", "ALLOWED", IdTagStatus::Accepted);
    token(&tags, "offline", "ALLOWED_OFFLINE", IdTagStatus::Accepted);
    token(&tags, "never", "NEVER", IdTagStatus::Accepted);
    token(&tags, "never-invalid", "NEVER", IdTagStatus::Blocked);
    // No party link yet: those that ask are answered as if the eMSP were unreachable.
    assert_eq!(at_once(&authority, "CP-1", "offline"), Some("Accepted"));
    assert_eq!(at_once(&authority, "CP-1", "never"), Some("Invalid"));
    link(&tags, "http://127.0.0.1:9/tokens");
    assert_eq!(at_once(&authority, "CP-1", "always"), Some("Accepted"));
    assert_eq!(at_once(&authority, "CP-1", "ALLOWED"), Some("Accepted"));
    assert_eq!(at_once(&authority, "CP-1", "offline"), None);
    assert_eq!(at_once(&authority, "CP-1", "NEVER"), None);
    // Invalid in cms's copy, yet asked: its state may have changed (2.2.1, WhitelistType).
    assert_eq!(at_once(&authority, "CP-1", "never-invalid"), None);
    // A charger without an OCPI location cannot be asked about.
    assert_eq!(at_once(&authority, "CP-NOWHERE", "never"), Some("Invalid"));
    // Start and stop are answered from memory whatever the whitelist.
    assert_eq!(
        authority.start("CP-1", 1, "never", 1, now()).status,
        "Accepted"
    );
    // Whitelisted now: answered from memory.
    token(&tags, "never", "ALWAYS", IdTagStatus::Accepted);
    assert_eq!(at_once(&authority, "CP-1", "never"), Some("Accepted"));
    tags.apply(PROVIDER, "OFFLINE", None);
    assert_eq!(at_once(&authority, "CP-1", "offline"), Some("Invalid"));
    tags.apply_party(PROVIDER, None);
    assert_eq!(
        at_once(&authority, "CP-1", "never-invalid"),
        Some("Invalid")
    );
}

/// The verdict after asking an eMSP at `url` about `tag`.
async fn asked(authority: &Authority, tag: &str) -> Verdict {
    match authority.authorize_or_ask("CP-1", tag, now()) {
        Authorized::Ask(ask) => authority.ask(*ask).await,
        Authorized::Now(verdict) => panic!("{tag} answered at once: {verdict:?}"),
    }
}

#[tokio::test]
async fn an_emsp_that_cannot_be_reached_or_is_late_leaves_the_whitelists_answer() {
    let (authority, tags) = authority(Duration::from_millis(200));
    token(&tags, "offline", "ALLOWED_OFFLINE", IdTagStatus::Accepted);
    token(
        &tags,
        "offline-blocked",
        "ALLOWED_OFFLINE",
        IdTagStatus::Blocked,
    );
    token(&tags, "never", "NEVER", IdTagStatus::Accepted);
    // Refused: a port nothing listens on.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    link(&tags, &format!("http://127.0.0.1:{port}/tokens"));
    assert_eq!(asked(&authority, "offline").await.status, "Accepted");
    assert_eq!(asked(&authority, "offline-blocked").await.status, "Blocked");
    assert_eq!(asked(&authority, "never").await.status, "Invalid");
    // Silent: it takes the connection and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    link(
        &tags,
        &format!("http://{}/tokens", silent.local_addr().unwrap()),
    );
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    assert_eq!(asked(&authority, "offline").await.status, "Accepted");
    assert_eq!(asked(&authority, "never").await.status, "Invalid");
    held.abort();
}

/// An eMSP that answers every request with `status` and `body`; what it was sent.
async fn answering(
    status: &'static str,
    body: &'static str,
) -> (String, Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/ocpi/tokens/", listener.local_addr().unwrap());
    let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = requests.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut read = vec![0; 8192];
            let n = socket.read(&mut read).await.unwrap_or(0);
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&read[..n]).to_string());
            let answer = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(answer.as_bytes()).await;
        }
    });
    (url, requests)
}

#[tokio::test]
async fn the_emsps_answer_decides_and_an_unknown_token_is_invalid() {
    let (authority, tags) = authority(Duration::from_secs(5));
    token(&tags, "Card/1", "ALLOWED_OFFLINE", IdTagStatus::Accepted);
    let blocked = r#"{"data":{"allowed":"BLOCKED","token":{}},"status_code":1000,
        "timestamp":"2026-11-24T12:00:00Z"}"#;
    let (url, requests) = answering("200 OK", blocked).await;
    link(&tags, &url);
    assert_eq!(asked(&authority, "card/1").await.status, "Blocked");
    let request = requests.lock().unwrap()[0].clone();
    // The uid as the eMSP wrote it, one path segment; the type; the token base64; the place.
    assert!(
        request.starts_with("POST /ocpi/tokens/Card%2F1/authorize?type=RFID HTTP/1.1"),
        "{request}"
    );
    let token = cms_ocpi::token_header::header_value("cms-token");
    assert!(
        request
            .to_ascii_lowercase()
            .contains(&format!("authorization: {}", token.to_ascii_lowercase())),
        "{request}"
    );
    assert!(
        request.ends_with(r#"{"location_id":"site-uuid","evse_uids":["charger-uuid"]}"#),
        "{request}"
    );

    let unknown = r#"{"status_code":2004,"status_message":"Unknown token","timestamp":"2026-11-24T12:00:00Z"}"#;
    let (url, _) = answering("404 Not Found", unknown).await;
    link(&tags, &url);
    assert_eq!(asked(&authority, "card/1").await.status, "Invalid");
    // A 404 that is no OCPI answer (a wrong URL) is a failure: the whitelist's answer.
    let (url, _) = answering("404 Not Found", "<html>no</html>").await;
    link(&tags, &url);
    assert_eq!(asked(&authority, "card/1").await.status, "Accepted");
}
