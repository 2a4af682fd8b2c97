//! Quotas (docs/operations.md "Quotas"): past what one team or user may create, each create
//! endpoint answers 422 naming the quota and writes nothing; the admin commands are held to the
//! same flags. On both stores.

use crate::support::rest::{create_site, team_of_type, uuid_of};
use crate::support::{Api, Backend, Cms};
use serde_json::{Value, json};

/// Every quota at 1, on `cms up`.
const ONE_OF_EACH: [&str; 18] = [
    "--quota-chargers",
    "1",
    "--quota-sites",
    "1",
    "--quota-id-tags",
    "1",
    "--quota-tariffs",
    "1",
    "--quota-providers",
    "1",
    "--quota-domains",
    "1",
    "--quota-invites",
    "1",
    "--quota-teams",
    "1",
    "--quota-tokens",
    "1",
];

/// POSTs `body` twice: the first is created, the second refused with the quota `key`'s 422.
async fn second_is_refused(
    api: &Api,
    path: &str,
    first: Value,
    second: Value,
    key: &str,
    what: &str,
) {
    api.expect(201, "POST", path, Some(&first)).await;
    let refused = api.expect(422, "POST", path, Some(&second)).await;
    let message = format!("The {what}.");
    assert_eq!(
        refused,
        json!({"message": message, "errors": {key: [message]}}),
        "POST {path}"
    );
}

async fn each_create_past_its_quota_is_refused_naming_it(backend: Backend) {
    let Some(cms) = Cms::up_on_with(backend, &ONE_OF_EACH).await else {
        return;
    };
    // `cms token create` made the customer's one token.
    let api = Api::new(&cms, &cms.guest_token("customer@example.com").await);
    let token = json!({"name": "second", "scopes": ["*"]});
    let refused = api
        .expect(422, "POST", "/api/v3/user/tokens", Some(&token))
        .await;
    let tokens = "The user has reached their quota of 1 personal access tokens.";
    assert_eq!(
        refused,
        json!({"message": tokens, "errors": {"tokens": [tokens]}})
    );

    let site = uuid_of(&create_site(&api, "Depot").await);
    let refused = api
        .expect(
            422,
            "POST",
            "/api/v3/sites",
            Some(&crate::support::rest::site_body("Two")),
        )
        .await;
    assert_eq!(
        refused["errors"],
        json!({"sites": ["The team has reached its quota of 1 sites."]})
    );
    assert_eq!(
        api.get_ok("/api/v3/sites").await["data"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );

    let chargers = format!("/api/v3/sites/{site}/chargers");
    let team_chargers = "team has reached its quota of 1 chargers";
    second_is_refused(
        &api,
        &chargers,
        json!({"identity": "Q-1"}),
        json!({"identity": "Q-2"}),
        "chargers",
        team_chargers,
    )
    .await;
    assert_eq!(
        api.get_ok(&chargers).await["data"].as_array().map(Vec::len),
        Some(1)
    );

    let team = team_of_type(&api, "personal").await;
    let team = uuid_of(&team);
    let teams = "/api/v2/teams";
    let new_team =
        |name: &str| json!({"name": name, "email": "fleet@example.com", "type": "business"});
    second_is_refused(
        &api,
        teams,
        new_team("One"),
        new_team("Two"),
        "teams",
        "user has reached their quota of 1 teams",
    )
    .await;

    let id_tags = format!("/api/v3/teams/{team}/id-tags");
    second_is_refused(
        &api,
        &id_tags,
        json!({"id_tag": "CARD-1"}),
        json!({"id_tag": "CARD-2"}),
        "id_tags",
        "team has reached its quota of 1 id tags",
    )
    .await;

    let tariff = |name: &str| {
        json!({"name": name, "currency": "EUR", "elements": [{"price_components": [
            {"type": "ENERGY", "price": "0.30", "vat": 20, "step_size": 1}]}]})
    };
    let tariffs = format!("/api/v3/teams/{team}/tariffs");
    second_is_refused(
        &api,
        &tariffs,
        tariff("One"),
        tariff("Two"),
        "tariffs",
        "team has reached its quota of 1 tariffs",
    )
    .await;

    let provider = |party: &str| json!({"name": "Roam", "country_code": "NL", "party_id": party});
    let providers = format!("/api/v3/teams/{team}/providers");
    api.expect(201, "POST", &providers, Some(&provider("ONE")))
        .await;
    let refused = api
        .expect(422, "POST", &providers, Some(&provider("TWO")))
        .await;
    assert_eq!(
        refused["errors"],
        json!({"providers": ["The team has reached its quota of 1 providers."]})
    );
    // A provider's tags count in its team's quota, which the team's own tag filled.
    let listed = api.get_ok(&providers).await;
    let provider_uuid = uuid_of(&listed["data"][0]);
    let provider_tags = format!("/api/v3/teams/{team}/providers/{provider_uuid}/id-tags");
    let refused = api
        .expect(
            422,
            "POST",
            &provider_tags,
            Some(&json!({"id_tag": "DRIVER-1"})),
        )
        .await;
    assert_eq!(
        refused["errors"],
        json!({"id_tags": ["The team has reached its quota of 1 id tags."]})
    );

    let domains = format!("/api/v3/teams/{team}/domains");
    second_is_refused(
        &api,
        &domains,
        json!({"domain": "one.example"}),
        json!({"domain": "two.example"}),
        "domains",
        "team has reached its quota of 1 domains",
    )
    .await;

    let invites = format!("/api/v3/sites/{site}/teams/invite");
    let invite = |email: &str| json!({"email": email});
    second_is_refused(
        &api,
        &invites,
        invite("a@example.com"),
        invite("b@example.com"),
        "invites",
        "team has reached its quota of 1 pending invites",
    )
    .await;

    // Another customer's quotas are their own.
    let other = Api::new(&cms, &cms.guest_token("other@example.com").await);
    create_site(&other, "Theirs").await;
}

mod each_create_past_its_quota_is_refused_naming_it {
    use crate::support::Backend;

    #[tokio::test]
    async fn sqlite() {
        super::each_create_past_its_quota_is_refused_naming_it(Backend::Sqlite).await;
    }

    #[tokio::test]
    async fn postgres() {
        super::each_create_past_its_quota_is_refused_naming_it(Backend::Postgres).await;
    }
}

#[tokio::test]
async fn the_admin_commands_are_held_to_the_quotas_they_are_given() {
    let cms = Cms::up().await;
    let quota = ["--quota-chargers", "2"];
    let add = |identity: &'static str| {
        let mut args = vec!["charger", "add", "--identity", identity];
        args.extend_from_slice(&quota);
        args
    };
    assert!(cms.cli(&add("OPS-1")).await.status.success());
    // An import that does not fit registers none of its chargers.
    let file = tempfile::NamedTempFile::new().expect("a file");
    std::fs::write(file.path(), "OPS-2\nOPS-3\n").expect("write the file");
    let path = file.path().display().to_string();
    let mut import = vec!["charger", "import", "--file", &path];
    import.extend_from_slice(&quota);
    let refused = cms.cli(&import).await;
    assert!(!refused.status.success(), "{}", refused.stdout);
    assert!(
        refused.stderr.contains(
            "The team has reached its quota of 2 chargers. Raise it with --quota-chargers \
             (CMS_QUOTA_CHARGERS)."
        ),
        "{}",
        refused.stderr
    );
    assert!(cms.cli(&add("OPS-2")).await.status.success());
    let third = cms.cli(&add("OPS-3")).await;
    assert!(!third.status.success());
    assert!(
        third.stderr.contains("quota of 2 chargers"),
        "{}",
        third.stderr
    );
    // Without the flag, the default holds.
    assert!(
        cms.cli(&["charger", "add", "--identity", "OPS-3"])
            .await
            .status
            .success()
    );
}
