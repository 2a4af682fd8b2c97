//! Personal access tokens managed by their owner, through the REST API
//! (`/api/v3/user/tokens`) and the command line (`cms token list|revoke|regenerate`).

use crate::support::rest::sorted_keys;
use crate::support::{Api, Cms, assert_record_time, eventually, on_both_stores};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// How soon a token revoked from the command line is refused by a running server.
const CHANGE_IN_FORCE: Duration = Duration::from_secs(1);

const TOKENS: &str = "/api/v3/user/tokens";

/// `<id>|<40 alphanumerics>`; returns the id.
fn token_id(plain: &str) -> i64 {
    let (id, secret) = plain.split_once('|').expect("`<id>|<secret>`");
    assert!(
        secret.len() == 40 && secret.chars().all(|c| c.is_ascii_alphanumeric()),
        "{plain}"
    );
    id.parse().expect("a numeric id")
}

/// A token as the API shows it: exactly these fields, never a secret.
fn assert_token_shape(token: &Value) {
    assert_eq!(
        sorted_keys(token),
        [
            "created_at",
            "id",
            "last_used_at",
            "name",
            "scopes",
            "updated_at"
        ],
        "{token}"
    );
    assert!(token["id"].is_i64() && token["name"].is_string() && token["scopes"].is_array());
    assert_record_time(&token["created_at"], "created_at");
    assert_record_time(&token["updated_at"], "updated_at");
}

/// Creates a token through the API and checks the answer; returns (id, plain token).
async fn create(api: &Api, name: &str, scopes: &[&str]) -> (i64, String) {
    let answer = api
        .expect(
            201,
            "POST",
            TOKENS,
            Some(&json!({"name": name, "scopes": scopes})),
        )
        .await;
    assert_token_shape(&answer["data"]);
    assert_eq!(answer["data"]["name"], name);
    assert_eq!(answer["data"]["scopes"], json!(scopes));
    assert_eq!(answer["data"]["last_used_at"], Value::Null);
    let plain = answer["plain_text_token"]
        .as_str()
        .expect("plain_text_token");
    let id = token_id(plain);
    assert_eq!(answer["data"]["id"], id);
    (id, plain.to_string())
}

on_both_stores!(tokens_are_created_listed_regenerated_and_revoked, |cms| {
    let owner = cms
        .create_token(
            "owner@example.com",
            Some("tokens:read,tokens:write,chargers:read"),
        )
        .await;
    let api = Api::new(&cms, &owner);
    let (id, plain) = create(&api, "CI pipeline", &["chargers:read"]).await;

    let ci = Api::new(&cms, &plain);
    assert_eq!(ci.get("/api/v3/chargers").await.status, 200);
    assert_eq!(
        ci.get(TOKENS).await.status,
        403,
        "the new token has only its own scope"
    );

    let page = api.get_ok(TOKENS).await;
    assert!(
        page["links"].is_object() && page["meta"]["per_page"] == 25,
        "{page}"
    );
    let listed = page["data"].as_array().expect("data");
    assert_eq!(listed.len(), 2, "the owner's two tokens: {page}");
    assert_eq!(listed[0]["id"], id, "newest first");
    for token in listed {
        assert_token_shape(token);
    }
    let secret = plain.split_once('|').unwrap().1;
    assert!(!page.to_string().contains(secret), "never a secret: {page}");
    // Written in the background after the use (at most once a minute): there soon after.
    let used = eventually("the new token's last use to be recorded", async || {
        let page = api.get_ok(TOKENS).await;
        let used = page["data"][0]["last_used_at"].clone();
        if used.is_null() {
            Err(format!("not yet: {page}"))
        } else {
            Ok(used)
        }
    })
    .await;
    assert_record_time(&used, "last_used_at, once used");

    let regenerated = api
        .expect(200, "POST", &format!("{TOKENS}/{id}/regenerate"), None)
        .await;
    assert_token_shape(&regenerated["data"]);
    assert_eq!(regenerated["data"]["name"], "CI pipeline");
    assert_eq!(regenerated["data"]["scopes"], json!(["chargers:read"]));
    let fresh = regenerated["plain_text_token"].as_str().expect("new token");
    assert_eq!(token_id(fresh), id, "the same token, a new secret");
    assert_ne!(fresh, plain);
    assert_eq!(
        ci.get("/api/v3/chargers").await.status,
        401,
        "the old secret stops at once"
    );
    let ci = Api::new(&cms, fresh);
    assert_eq!(ci.get("/api/v3/chargers").await.status, 200);

    let revoked = api
        .expect(200, "DELETE", &format!("{TOKENS}/{id}"), None)
        .await;
    assert_eq!(revoked, json!({}));
    assert_eq!(
        ci.get("/api/v3/chargers").await.status,
        401,
        "revoked at once"
    );
    let page = api.get_ok(TOKENS).await;
    assert_eq!(page["data"].as_array().map(Vec::len), Some(1), "{page}");
    api.expect(404, "DELETE", &format!("{TOKENS}/{id}"), None)
        .await;
    api.expect(404, "POST", &format!("{TOKENS}/{id}/regenerate"), None)
        .await;
    api.expect(404, "DELETE", &format!("{TOKENS}/not-a-number"), None)
        .await;
});

on_both_stores!(creating_a_token_is_validated, |cms| {
    let narrow = cms
        .create_token("narrow@example.com", Some("tokens:write,chargers:read"))
        .await;
    let api = Api::new(&cms, &narrow);
    let cases = [
        (json!({"scopes": ["chargers:read"]}), "name"),
        (
            json!({"name": "x".repeat(256), "scopes": ["chargers:read"]}),
            "name",
        ),
        (json!({"name": 7, "scopes": ["chargers:read"]}), "name"),
        (json!({"name": "ci"}), "scopes"),
        (json!({"name": "ci", "scopes": "chargers:read"}), "scopes"),
        (json!({"name": "ci", "scopes": []}), "scopes"),
        (
            json!({"name": "ci", "scopes": ["chargers:read", "root"]}),
            "scopes.1",
        ),
        (json!({"name": "ci", "scopes": [7]}), "scopes.0"),
        // More than the requesting token holds.
        (json!({"name": "ci", "scopes": ["sites:write"]}), "scopes.0"),
        (json!({"name": "ci", "scopes": ["*"]}), "scopes.0"),
    ];
    for (body, field) in cases {
        let errors = api.expect_invalid("POST", TOKENS, Some(&body)).await;
        assert!(
            errors[field].is_array(),
            "{body} fails on {field}: {errors}"
        );
    }
    // A token with every scope may hand out every scope.
    let operator = Api::new(&cms, &cms.operator_token().await);
    create(&operator, "admin", &["*"]).await;
    create(&Api::new(&cms, &narrow), "reader", &["chargers:read"]).await;
});

on_both_stores!(tokens_need_their_scopes_and_stay_their_owners, |cms| {
    let owner = Api::new(&cms, &cms.operator_token().await);
    let guest_token = cms.guest_token("guest@example.com").await;
    let guest_id = token_id(&guest_token);
    for (method, path) in [
        ("DELETE", format!("{TOKENS}/{guest_id}")),
        ("POST", format!("{TOKENS}/{guest_id}/regenerate")),
    ] {
        owner.expect(404, method, &path, None).await;
    }
    let guest = Api::new(&cms, &guest_token);
    assert_eq!(guest.get("/api/v3/chargers").await.status, 200, "untouched");
    let listed = guest.get_ok(TOKENS).await;
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(1), "{listed}");

    let anonymous = Api::new(&cms, "");
    assert_eq!(anonymous.get_authorized(TOKENS, None).await.status, 401);
    let reader = Api::new(
        &cms,
        &cms.create_token("r@example.com", Some("chargers:read"))
            .await,
    );
    assert_eq!(reader.get(TOKENS).await.status, 403);
    let body = json!({"name": "x", "scopes": ["chargers:read"]});
    reader.expect(403, "POST", TOKENS, Some(&body)).await;
    reader
        .expect(403, "DELETE", &format!("{TOKENS}/{guest_id}"), None)
        .await;
    reader
        .expect(
            403,
            "POST",
            &format!("{TOKENS}/{guest_id}/regenerate"),
            None,
        )
        .await;
});

on_both_stores!(the_command_line_lists_revokes_and_regenerates, |cms| {
    let email = "cli@example.com";
    let first = cms.create_token(email, Some("chargers:read")).await;
    let second = cms.create_token(email, None).await;
    let (first_id, second_id) = (token_id(&first), token_id(&second));

    let list = cms.cli(&["token", "list", "--email", email]).await;
    assert!(list.status.success(), "{}", list.stderr);
    let rows: Vec<Vec<&str>> = list
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 2, "{}", list.stdout);
    assert_eq!(rows[0][0], second_id.to_string(), "newest first");
    assert_eq!(
        (rows[1][0], rows[1][2]),
        (first_id.to_string().as_str(), "chargers:read")
    );
    for token in [&first, &second] {
        assert!(!list.stdout.contains(token.split_once('|').unwrap().1));
    }

    let id = first_id.to_string();
    let regenerated = cms.cli(&["token", "regenerate", "--id", &id]).await;
    assert!(regenerated.status.success(), "{}", regenerated.stderr);
    let fresh = regenerated.last_line();
    assert_eq!(token_id(fresh), first_id);
    assert_eq!(
        Api::new(&cms, &first).get("/api/v3/chargers").await.status,
        401
    );
    let api = Api::new(&cms, fresh);
    assert_eq!(api.get("/api/v3/chargers").await.status, 200);

    let revoked = cms.cli(&["token", "revoke", "--id", &id]).await;
    assert!(revoked.status.success(), "{}", revoked.stderr);
    // Held in the server's memory since its use above: forgotten within a poll of the log.
    api.wait_for_status("/api/v3/chargers", 401, Instant::now(), CHANGE_IN_FORCE)
        .await;
    let again = cms.cli(&["token", "revoke", "--id", &id]).await;
    assert!(
        !again.status.success(),
        "a revoked token cannot be revoked again"
    );
    let list = cms.cli(&["token", "list", "--email", email]).await;
    assert_eq!(
        list.stdout.lines().count(),
        2,
        "header and one token: {}",
        list.stdout
    );
    let nobody = cms
        .cli(&["token", "list", "--email", "nobody@example.com"])
        .await;
    assert!(!nobody.status.success());
});

#[tokio::test]
async fn a_guest_token_created_on_the_command_line_is_listed_for_its_owner_only() {
    let cms = Cms::up().await;
    let guest = cms.guest_token("g@example.com").await;
    let operator = cms.operator_token().await;
    let page = Api::new(&cms, &operator).get_ok(TOKENS).await;
    let ids: Vec<i64> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|t| t["id"].as_i64())
        .collect();
    assert_eq!(
        ids,
        [token_id(&operator)],
        "not the guest's {}",
        token_id(&guest)
    );
}
