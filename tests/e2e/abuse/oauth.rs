//! Abuse cases of OAuth and its login page: guessing passwords, filling the store with
//! authorization requests, downgrading PKCE, and keeping access after a client or grant is
//! revoked.

use crate::oauth::{App, CHALLENGE, EMAIL, PASSWORD, PKCE, VERIFIER, assert_oauth_error};
use crate::support::{Api, Cms};
use futures_util::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The pending requests `cms oauth client list` shows for the client `client_id`.
async fn pending_requests(cms: &Cms, client_id: &str) -> u64 {
    let listed = cms.cli(&["oauth", "client", "list"]).await;
    assert!(listed.status.success(), "client list: {}", listed.stderr);
    let row = listed
        .stdout
        .lines()
        .find(|line| line.starts_with(client_id))
        .unwrap_or_else(|| panic!("the client is listed: {}", listed.stdout));
    let pending = row.split('\t').nth(4).expect("a pending column");
    pending.parse().expect("a count")
}

#[tokio::test]
async fn a_hundred_wrong_passwords_get_five_checks_then_429_until_the_lockout_ends() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let first = app
        .authorize_with("chargers:read", &[])
        .await
        .request_field();
    for attempt in 1..=5 {
        let wrong = app.login(&first, EMAIL, "a wrong guess").await;
        assert_eq!(wrong.status, 401, "attempt {attempt}: {}", wrong.body);
        assert_eq!(wrong.retry_after, None);
    }
    // The fifth failure ended that request; a new one is refused while the lockout lasts.
    let second = app
        .authorize_with("chargers:read", &[])
        .await
        .request_field();
    for attempt in 6..=100 {
        let locked = app.login(&second, EMAIL, "a wrong guess").await;
        assert_eq!(locked.status, 429, "attempt {attempt}: {}", locked.body);
        let wait: u64 = locked
            .retry_after
            .as_deref()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a Retry-After in seconds: {:?}", locked.retry_after));
        assert!((1..=60).contains(&wait), "Retry-After {wait}");
        assert!(
            locked.body.contains("Too many failed logins") && locked.has_request_field(),
            "the login page says why: {}",
            locked.body
        );
    }
    let right = app.login(&second, EMAIL, PASSWORD).await;
    assert_eq!(
        right.status, 429,
        "the right password waits too: {}",
        right.body
    );
    assert!(!right.body.contains(r#"name="decision""#), "{}", right.body);

    let metrics = Api::new(&cms, "").metrics().await;
    assert_eq!(
        metrics.sum("cms_oauth_password_checks_total", &[]),
        Some(5.0),
        "no password is checked during the lockout"
    );
    let ended = app.login(&first, EMAIL, PASSWORD).await;
    assert_eq!(ended.status, 400, "{}", ended.body);
    assert!(ended.body.contains("expired"), "{}", ended.body);
}

#[tokio::test]
async fn wrong_passwords_from_one_address_leave_the_owner_logging_in_from_another() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let guesser = app.at_address("127.0.0.2");
    for attempt in 1..=10 {
        let request = guesser
            .authorize_with("chargers:read", &[])
            .await
            .request_field();
        let status = guesser.login(&request, EMAIL, "a wrong guess").await.status;
        let expected = if attempt <= 5 { 401 } else { 429 };
        assert_eq!(status, expected, "attempt {attempt}");
    }
    // The owner, elsewhere, is not locked out.
    let owner = app.at_address("127.0.0.3");
    let request = owner
        .authorize_with("chargers:read", &[])
        .await
        .request_field();
    let approval = owner.login(&request, EMAIL, PASSWORD).await;
    assert_eq!(approval.status, 200, "{}", approval.body);
    assert!(
        approval.body.contains(r#"name="decision""#),
        "{}",
        approval.body
    );
}

/// The status of `GET <path_and_query>` sent over a raw socket: an HTTP client library refuses
/// to send a URI longer than 64 KiB, an attacker does not.
async fn raw_get_status(cms: &Cms, path_and_query: &str) -> u16 {
    let base = cms.http_url("");
    let addr = base.trim_start_matches("http://");
    let mut socket = TcpStream::connect(addr).await.expect("connect");
    let request =
        format!("GET {path_and_query} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    socket.write_all(request.as_bytes()).await.expect("send");
    let mut answer = Vec::new();
    socket.read_to_end(&mut answer).await.expect("an answer");
    let status_line = String::from_utf8_lossy(&answer[..answer.len().min(12)]).to_string();
    status_line
        .strip_prefix("HTTP/1.1 ")
        .and_then(|rest| rest.get(..3)?.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP status line: {status_line:?}"))
}

#[tokio::test]
async fn a_state_of_100_kib_is_refused_and_nothing_is_kept() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let with_state = |state: &str| {
        let mut params = app.params("chargers:read");
        params.retain(|(name, _)| *name != "state");
        params.extend_from_slice(&PKCE);
        params.push(("state", state));
        let url =
            reqwest::Url::parse_with_params("http://cms/oauth/authorize", params).expect("a URL");
        format!("{}?{}", url.path(), url.query().unwrap_or_default())
    };
    // Past what a request head or a URI may hold (64 KiB), the HTTP layer refuses it (431 or
    // 414) before any handler sees it.
    let status = raw_get_status(&cms, &with_state(&"s".repeat(100 * 1024))).await;
    assert!(matches!(status, 400 | 414 | 431), "{status}");
    // Within what a URI may hold: past the query string's limit, then past the state's own.
    for size in [32 * 1024, 1025] {
        let refused = app.get(&with_state(&"s".repeat(size))).await;
        assert_eq!(
            refused.status,
            400,
            "{size} bytes: {}",
            &refused.body[..200.min(refused.body.len())]
        );
        assert_eq!(refused.location, None, "never sent back to the client");
        assert!(refused.body.contains("too long"), "{}", refused.body);
    }
    assert_eq!(pending_requests(&cms, &app.client_id).await, 0);

    let most = app.get(&with_state(&"s".repeat(1024))).await;
    assert_eq!(most.status, 200, "{}", most.body);
    assert_eq!(pending_requests(&cms, &app.client_id).await, 1);
}

#[tokio::test]
async fn a_thousand_strangers_from_one_address_keep_at_most_twenty_requests() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let statuses: Vec<u16> = futures_util::stream::iter(0..1000)
        .map(|_| async { app.authorize_with("chargers:read", &[]).await.status })
        .buffer_unordered(8)
        .collect()
        .await;
    let count = |status| statuses.iter().filter(|s| **s == status).count();
    assert_eq!((count(200), count(429)), (20, 980), "{statuses:?}");
    assert_eq!(pending_requests(&cms, &app.client_id).await, 20);
    let refused = app.authorize_with("chargers:read", &[]).await;
    assert_eq!(refused.location, None);
    assert!(
        refused.body.contains("Too many authorization requests"),
        "{}",
        refused.body
    );
}

#[tokio::test]
async fn an_authorization_without_s256_pkce_goes_back_as_invalid_request() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let plain = [
        ("code_challenge", VERIFIER),
        ("code_challenge_method", "plain"),
    ];
    let implicit_plain = [("code_challenge", CHALLENGE)];
    for (case, pkce) in [
        ("no PKCE", &[][..]),
        ("plain", &plain[..]),
        ("no method (plain by default)", &implicit_plain[..]),
    ] {
        let mut params = app.params("chargers:read");
        params.extend_from_slice(pkce);
        let refused = app.authorize(&params).await;
        assert_eq!(
            refused.redirect_param("error").as_deref(),
            Some("invalid_request"),
            "{case}"
        );
        let description = refused
            .redirect_param("error_description")
            .unwrap_or_default();
        assert!(
            description.contains("S256"),
            "{case}: the description names the method: {description}"
        );
        assert_eq!(refused.redirect_param("state").as_deref(), Some("st4te"));
    }
    assert_eq!(pending_requests(&cms, &app.client_id).await, 0);
}

#[tokio::test]
async fn revoking_a_client_ends_its_access_and_refresh_tokens() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let (access, refresh) = app.tokens("chargers:read").await;
    let unexchanged = app.code("chargers:read").await;
    let api = Api::new(&cms, &access);
    assert_eq!(api.get("/api/v3/chargers").await.status, 200);

    let revoked = cms
        .cli(&["oauth", "client", "revoke", "--client-id", &app.client_id])
        .await;
    assert!(revoked.status.success(), "{}", revoked.stderr);
    // The token is held in the server's memory since its use above: the command line's change
    // reaches it through the access change log within a poll (a second at most).
    let within = std::time::Duration::from_secs(1);
    api.wait_for_status("/api/v3/chargers", 401, std::time::Instant::now(), within)
        .await;
    assert_oauth_error(&app.refresh(&refresh).await, 401, "invalid_client");
    assert_oauth_error(&app.exchange(&unexchanged).await, 401, "invalid_client");
    let restart = app.authorize_with("chargers:read", &[]).await;
    assert_eq!((restart.status, restart.location), (400, None));
}

#[tokio::test]
async fn a_narrow_token_cannot_revoke_a_wider_grant() {
    let cms = Cms::up().await;
    let app = App::register(&cms).await;
    let (access, _) = app.tokens("chargers:read teams:read").await;
    let narrow = Api::new(
        &cms,
        &cms.create_token(EMAIL, Some("tokens:read,tokens:write"))
            .await,
    );
    let listed = narrow.get_ok("/api/v3/user/oauth-grants").await;
    let path = format!("/api/v3/user/oauth-grants/{}", listed["data"][0]["id"]);
    let refused = narrow.send("DELETE", &path, None).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    let application = Api::new(&cms, &access);
    assert_eq!(
        application.get("/api/v3/chargers").await.status,
        200,
        "the application keeps its access"
    );

    let wide = Api::new(&cms, &cms.create_token(EMAIL, None).await);
    assert_eq!(wide.expect(200, "DELETE", &path, None).await, json!({}));
    assert_eq!(application.get("/api/v3/chargers").await.status, 401);
}
