//! A team's webhooks over REST (docs/api.md "Webhooks"): the secret shown once, the fields
//! checked, at most 20 a team, another team's webhook not found, a read-only token refused, and
//! private addresses refused unless `--webhook-allow-private`. On both stores.

use crate::support::rest::{team_of_type, uuid_of};
use crate::support::{Api, Backend, Cms};
use serde_json::{Value, json};

fn webhook(url: &str) -> Value {
    json!({"url": url, "event_types": ["charger.connected", "transaction.ended"],
           "description": "Back office"})
}

/// The customer's personal team's webhooks path.
async fn webhooks_of(api: &Api) -> String {
    let team = uuid_of(&team_of_type(api, "personal").await);
    format!("/api/v3/teams/{team}/webhooks")
}

async fn a_teams_webhooks_are_its_members_own(backend: Backend) {
    let Some(cms) = Cms::up_on(backend).await else {
        return;
    };
    let api = Api::new(&cms, &cms.guest_token("customer@example.com").await);
    let webhooks = webhooks_of(&api).await;

    // Refused: a private address, plain http, an unknown and a repeated event type.
    let errors = api
        .expect_invalid("POST", &webhooks, Some(&webhook("https://127.0.0.1/hooks")))
        .await;
    assert!(
        errors["url"][0].as_str().unwrap().contains("loopback"),
        "{errors}"
    );
    let errors = api
        .expect_invalid("POST", &webhooks, Some(&webhook("http://1.1.1.1/hooks")))
        .await;
    assert!(
        errors["url"][0].as_str().unwrap().contains("https"),
        "{errors}"
    );
    let bad = json!({"url": "https://1.1.1.1/hooks",
                     "event_types": ["charger.connected", "charger.exploded", "charger.connected"]});
    let errors = api.expect_invalid("POST", &webhooks, Some(&bad)).await;
    assert_eq!(
        errors,
        json!({"event_types.1": ["The selected event_types.1 is invalid."],
               "event_types.2": ["The event_types.2 field has a duplicate value."]})
    );

    // Made: the secret in this answer only.
    let created = api
        .expect(
            201,
            "POST",
            &webhooks,
            Some(&webhook("https://1.1.1.1/hooks")),
        )
        .await["data"]
        .clone();
    let uuid = uuid_of(&created);
    let secret = created["secret"].as_str().expect("the secret").to_string();
    assert!(secret.starts_with("whsec_"), "{created}");
    assert_eq!(created["enabled"], true);
    assert_eq!(created["disabled_reason"], Value::Null);
    let one = format!("{webhooks}/{uuid}");
    let shown = api.get_ok(&one).await["data"].clone();
    assert_eq!(shown.get("secret"), None, "{shown}");
    assert_eq!(
        shown["event_types"],
        json!(["charger.connected", "transaction.ended"])
    );
    let listed = api.get_ok(&webhooks).await;
    assert_eq!(listed["data"][0]["uuid"], uuid.as_str());
    assert_eq!(listed["data"][0].get("secret"), None, "{listed}");
    assert_eq!(listed["meta"]["per_page"], 25);
    assert_eq!(listed["meta"]["current_page"], 1);
    assert_eq!(listed["links"]["next"], Value::Null);
    let second_page = api.get_ok(&format!("{webhooks}?page=2")).await;
    assert_eq!(second_page["data"], json!([]), "{second_page}");
    api.expect_invalid("GET", &format!("{webhooks}?page=0"), None)
        .await;

    // Replaced (PUT): the secret stays, and is not shown.
    let off = json!({"url": "https://1.0.0.1/v2", "event_types": ["charger.offline"],
                     "enabled": false});
    let replaced = api.expect(200, "PUT", &one, Some(&off)).await["data"].clone();
    assert_eq!(replaced["url"], "https://1.0.0.1/v2");
    assert_eq!(replaced["enabled"], false);
    assert_eq!(replaced["description"], Value::Null);
    assert_eq!(replaced.get("secret"), None, "{replaced}");

    // Rotated: a new secret shown, the old one kept signing for 24 hours.
    let rotated = api
        .expect(200, "POST", &format!("{one}/rotate-secret"), None)
        .await["data"]
        .clone();
    let new_secret = rotated["secret"].as_str().expect("the new secret");
    assert!(
        new_secret.starts_with("whsec_") && new_secret != secret,
        "{rotated}"
    );
    let store = cms.open_store().await;
    let team = uuid_of(&team_of_type(&api, "personal").await);
    let team = store.team_by_uuid(&team).await.unwrap().unwrap();
    let stored = store.webhook(team.id, &uuid).await.unwrap().unwrap();
    assert_eq!(stored.secret, new_secret);
    assert_eq!(stored.previous_secret.as_deref(), Some(secret.as_str()));
    let until = stored.previous_secret_until.expect("until when it signs");
    let until = chrono::DateTime::parse_from_rfc3339(&until).unwrap();
    let left = until.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(left > chrono::Duration::hours(23), "{left}");

    // A read-only token of the same member reads, and changes nothing.
    let read_only = api
        .expect(
            201,
            "POST",
            "/api/v3/user/tokens",
            Some(&json!({"name": "reader", "scopes": ["teams:read"]})),
        )
        .await;
    let reader = Api::new(
        &cms,
        read_only["plain_text_token"].as_str().expect("the token"),
    );
    reader.get_ok(&one).await;
    reader
        .expect(403, "POST", &webhooks, Some(&webhook("https://1.1.1.1/x")))
        .await;
    reader
        .expect(403, "POST", &format!("{one}/rotate-secret"), None)
        .await;

    // Another team's member finds nothing of it, through either team.
    let other = Api::new(&cms, &cms.guest_token("other@example.com").await);
    let theirs = webhooks_of(&other).await;
    for path in [one.clone(), format!("{theirs}/{uuid}")] {
        other.expect(404, "GET", &path, None).await;
        other.expect(404, "PUT", &path, Some(&off)).await;
        other
            .expect(404, "POST", &format!("{path}/rotate-secret"), None)
            .await;
        other.expect(404, "DELETE", &path, None).await;
    }
    assert_eq!(api.get_ok(&one).await["data"]["url"], "https://1.0.0.1/v2");

    // 20 a team: the 21st is refused, another team's are its own.
    for n in 1..20 {
        let url = format!("https://1.1.1.1/{n}");
        api.expect(201, "POST", &webhooks, Some(&webhook(&url)))
            .await;
    }
    let refused = api
        .expect(422, "POST", &webhooks, Some(&webhook("https://1.1.1.1/21")))
        .await;
    let message = "The team has reached its limit of 20 webhooks.";
    assert_eq!(
        refused,
        json!({"message": message, "errors": {"webhooks": [message]}})
    );
    other
        .expect(
            201,
            "POST",
            &theirs,
            Some(&webhook("https://1.1.1.1/theirs")),
        )
        .await;

    // Deleted: gone, and its place free again.
    api.expect(200, "DELETE", &one, None).await;
    api.expect(404, "GET", &one, None).await;
    api.expect(
        201,
        "POST",
        &webhooks,
        Some(&webhook("https://1.1.1.1/again")),
    )
    .await;
}

mod a_teams_webhooks_are_its_members_own {
    use crate::support::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::a_teams_webhooks_are_its_members_own(Backend::Sqlite).await;
    }

    #[tokio::test]
    async fn postgres() {
        super::a_teams_webhooks_are_its_members_own(Backend::Postgres).await;
    }
}

#[tokio::test]
async fn a_private_address_is_accepted_only_with_webhook_allow_private() {
    let cms = Cms::up_with(&["--webhook-allow-private"]).await;
    let api = Api::new(&cms, &cms.guest_token("customer@example.com").await);
    let webhooks = webhooks_of(&api).await;
    for url in ["http://127.0.0.1:9/hooks", "https://10.0.0.1/hooks"] {
        let created = api
            .expect(201, "POST", &webhooks, Some(&webhook(url)))
            .await;
        assert_eq!(created["data"]["url"], url);
    }
    // Credentials in the URL stay refused.
    let errors = api
        .expect_invalid("POST", &webhooks, Some(&webhook("https://a:b@127.0.0.1/")))
        .await;
    assert!(errors["url"].is_array(), "{errors}");
}
