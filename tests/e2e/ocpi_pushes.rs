//! A provider's OCPI pushes over REST (docs/ocpi.md "Delivery"), on both stores: the pushes
//! are written into the store directly (delivered, failed, or due far ahead, so the dispatcher
//! leaves them), and read as the team's members see them: newest first, 25 a page, never the
//! body.

use crate::support::rest::{team_of_type, uuid_of};
use crate::support::{Api, Cms, on_both_stores};
use serde_json::{Value, json};

/// Runs `sql` on the store of `cms up`.
async fn sql(cms: &Cms, sql: &str) {
    let args = cms.store_args();
    let url = match args[0].as_str() {
        "--data-dir" => format!("sqlite://{}/cms.sqlite3", args[1]),
        _ => args[1].clone(),
    };
    cms_store::testing::execute(&url, sql).await.unwrap();
}

const T0: &str = "2026-11-24T12:00:00.000000Z";
const T1: &str = "2026-11-24T12:00:05.000000Z";
const FAR: &str = "2099-01-01T00:00:00.000000Z";

/// A provider of the operators' team with 26 pushes: 24 delivered, then one failed, then one
/// pending; the team's uuid and the provider's pushes' path.
async fn provider_with_pushes(cms: &Cms, api: &Api) -> (String, String) {
    let team = uuid_of(&team_of_type(api, "operators").await);
    let body = json!({"name": "EMP", "country_code": "DE", "party_id": "EMP"});
    let path = format!("/api/v3/teams/{team}/providers");
    let provider = api.expect(201, "POST", &path, Some(&body)).await;
    let provider = uuid_of(&provider["data"]);
    let id = format!("(SELECT id FROM providers WHERE uuid = '{provider}')");
    for n in 0..24 {
        sql(
            cms,
            &format!(
            "INSERT INTO ocpi_pushes (provider_id, object_key, module, method, path, body, state,
               attempts, next_attempt_at, created_at, delivered_at)
             VALUES ({id}, 'location:l-{n}', 'locations', 'PUT', '/NL/CMS/l-{n}',
                     '{{\"secret\":\"TOKEN-UID\"}}', 'delivered', 1, '{T0}', '{T0}', '{T1}')"
        ),
        )
        .await;
    }
    sql(
        cms,
        &format!(
            "INSERT INTO ocpi_pushes (provider_id, object_key, module, method, path, body, state,
           attempts, next_attempt_at, last_error, created_at)
         VALUES ({id}, 'cdr:t-1', 'cdrs', 'POST', '', '{{\"secret\":\"TOKEN-UID\"}}', 'failed',
                 8, '{T1}', 'OCPI status 2001: Invalid or missing parameters', '{T1}')"
        ),
    )
    .await;
    sql(
        cms,
        &format!(
            "INSERT INTO ocpi_pushes (provider_id, object_key, module, method, path, body, state,
           attempts, next_attempt_at, last_error, created_at)
         VALUES ({id}, 'session:t-2', 'sessions', 'PATCH', '/NL/CMS/t-2', '{{}}', 'pending',
                 1, '{FAR}', 'answered 503', '{T1}')"
        ),
    )
    .await;
    (
        team.clone(),
        format!("/api/v3/teams/{team}/providers/{provider}/ocpi/pushes"),
    )
}

on_both_stores!(
    a_providers_pushes_are_listed_newest_first_without_bodies,
    |cms| {
        let api = Api::new(&cms, &cms.operator_token().await);
        let (team, pushes) = provider_with_pushes(&cms, &api).await;
        let page = api.get_ok(&pushes).await;
        let data = page["data"].as_array().unwrap();
        assert_eq!(data.len(), 25, "25 a page: {page}");
        assert_eq!(page["meta"]["to"], 25, "{}", page["meta"]);
        let pending = &data[0];
        assert_eq!(
            (pending["object_key"].as_str(), pending["state"].as_str()),
            (Some("session:t-2"), Some("pending"))
        );
        assert_eq!(pending["next_attempt_at"], FAR);
        assert_eq!(pending["last_error"], "answered 503");
        let failed = &data[1];
        let fields = [
            "module",
            "method",
            "state",
            "attempts",
            "last_error",
            "created_at",
        ]
        .map(|f| failed[f].clone());
        let expected: [Value; 6] = [
            "cdrs".into(),
            "POST".into(),
            "failed".into(),
            8.into(),
            "OCPI status 2001: Invalid or missing parameters".into(),
            T1.into(),
        ];
        assert_eq!(fields, expected);
        assert_eq!(failed["next_attempt_at"], Value::Null, "only pending ones");
        let delivered = &data[2];
        assert_eq!(
            (
                delivered["path"].as_str(),
                delivered["delivered_at"].as_str()
            ),
            (Some("/NL/CMS/l-23"), Some(T1))
        );
        assert!(!page.to_string().contains("TOKEN-UID"), "no body: {page}");
        let last = api.get_ok(&format!("{pushes}?page=2")).await;
        assert_eq!(
            (last["meta"]["from"].as_i64(), last["meta"]["to"].as_i64()),
            (Some(26), Some(26))
        );
        assert_eq!(last["data"][0]["object_key"], "location:l-0", "oldest last");
        // An unknown provider: 404; a page that is no number: 422.
        let missing = format!(
            "/api/v3/teams/{team}/providers/22222222-2222-4222-8222-222222222222/ocpi/pushes"
        );
        let answer = api.expect(404, "GET", &missing, None).await;
        assert_eq!(answer["message"], "Provider not found.");
        api.expect_invalid("GET", &format!("{pushes}?page=x"), None)
            .await;
    }
);

on_both_stores!(another_team_does_not_read_a_providers_pushes, |cms| {
    let operator = Api::new(&cms, &cms.operator_token().await);
    let (_, pushes) = provider_with_pushes(&cms, &operator).await;
    let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
    guest.expect(404, "GET", &pushes, None).await;
    // Reading needs teams:read only.
    let reader = Api::new(
        &cms,
        &cms.create_token("operator@example.com", Some("teams:read"))
            .await,
    );
    reader.get_ok(&pushes).await;
    let other = Api::new(
        &cms,
        &cms.create_token("operator@example.com", Some("chargers:read"))
            .await,
    );
    other.expect(403, "GET", &pushes, None).await;
});

#[tokio::test]
async fn cms_up_runs_the_ocpi_dispatcher_with_its_metrics() {
    let cms = Cms::up_with(&[
        "--ocpi-push-timeout",
        "2s",
        "--ocpi-retry-delays",
        "1s,2s",
        "--ocpi-session-interval",
        "5s",
    ])
    .await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let pushed = |m: &crate::support::Metrics, outcome: &str| {
        m.sum(
            "cms_ocpi_pushes_total",
            &[("module", "locations"), ("outcome", outcome)],
        )
    };
    let metrics = api.metrics().await;
    assert_eq!(pushed(&metrics, "failed"), Some(0.0), "{}", metrics.text);
    assert_eq!(metrics.sum("cms_ocpi_pushes_pending", &[]), Some(0.0));
    // A push due now to a provider with no OCPI connection: failed at once, and said why.
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let body = json!({"name": "EMP", "country_code": "DE", "party_id": "EMP"});
    let path = format!("/api/v3/teams/{team}/providers");
    let provider = uuid_of(&api.expect(201, "POST", &path, Some(&body)).await["data"]);
    sql(
        &cms,
        &format!(
        "INSERT INTO ocpi_pushes (provider_id, object_key, module, method, path, next_attempt_at,
           created_at)
         SELECT id, 'location:l-1', 'locations', 'PUT', '/NL/CMS/l-1', '{T0}', '{T0}'
         FROM providers WHERE uuid = '{provider}'"
    ),
    )
    .await;
    let pushes = format!("{path}/{provider}/ocpi/pushes");
    let failed = crate::support::eventually("the push to fail", async || {
        let page = api.get_ok(&pushes).await;
        match page["data"][0]["state"].as_str() {
            Some("failed") => Ok(page["data"][0].clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert_eq!(
        failed["last_error"],
        "the provider is not registered over OCPI"
    );
    assert_eq!(failed["attempts"], 1);
    let metrics = api.metrics().await;
    assert_eq!(pushed(&metrics, "failed"), Some(1.0), "{}", metrics.text);
}
