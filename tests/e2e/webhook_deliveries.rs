//! A webhook's delivery log and redelivery over REST (docs/events.md), on both stores. The
//! webhook, its event, deliveries and attempts are written into the store directly (disabled,
//! so no dispatcher sends them): the log is read as the team's members see it.

use crate::support::rest::{team_of_type, uuid_of};
use crate::support::{Api, Cms, on_both_stores};
use serde_json::Value;

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

/// A disabled webhook of `team` with two deliveries: `d-old` delivered on its second attempt,
/// `d-new` failed.
async fn webhook_with_deliveries(cms: &Cms, team: &str) {
    let team_id = format!("(SELECT id FROM teams WHERE uuid = '{team}')");
    sql(cms, &format!(
        "INSERT INTO webhooks (uuid, team_id, url, event_types, enabled, secret, created_at, updated_at)
         VALUES ('11111111-1111-4111-8111-111111111111', {team_id}, 'https://example.com/h',
                 '[\"charger.connected\"]', 0, 'whsec_c2VjcmV0', '{T0}', '{T0}')"
    )).await;
    for (n, event) in ["evt_old", "evt_new"].iter().enumerate() {
        sql(cms, &format!(
            "INSERT INTO webhook_events (event_id, type, subject, team_id, data, occurred_at,
               received_at, created_at)
             VALUES ('{event}', 'charger.connected', 'CP-{n}', {team_id}, '{{}}', '{T0}', '{T0}', '{T0}')"
        )).await;
    }
    let webhook = "(SELECT id FROM webhooks WHERE uuid = '11111111-1111-4111-8111-111111111111')";
    sql(cms, &format!(
        "INSERT INTO webhook_deliveries (uuid, webhook_id, event_seq, subject, body, state, attempts,
           next_attempt_at, last_status, last_error, delivered_at, created_at)
         SELECT 'd-old', {webhook}, seq, 'CP-0', '{{}}', 'delivered', 2, '{T1}', 200, NULL, '{T1}', '{T0}'
         FROM webhook_events WHERE event_id = 'evt_old'"
    )).await;
    sql(cms, &format!(
        "INSERT INTO webhook_deliveries (uuid, webhook_id, event_seq, subject, body, state, attempts,
           next_attempt_at, last_status, last_error, created_at)
         SELECT 'd-new', {webhook}, seq, 'CP-1', '{{}}', 'failed', 1, '{T1}', NULL, 'timed out', '{T1}'
         FROM webhook_events WHERE event_id = 'evt_new'"
    )).await;
    for (delivery, at, status, error) in [
        ("d-old", T0, "500", "'oops'"),
        ("d-old", T1, "200", "NULL"),
        ("d-new", T1, "NULL", "'timed out'"),
    ] {
        sql(cms, &format!(
            "INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, error)
             SELECT id, '{at}', {status}, 42, {error} FROM webhook_deliveries WHERE uuid = '{delivery}'"
        )).await;
    }
}

on_both_stores!(
    a_webhooks_log_shows_its_deliveries_and_redelivers_one,
    |cms| {
        let api = Api::new(&cms, &cms.operator_token().await);
        let team = uuid_of(&team_of_type(&api, "operators").await);
        webhook_with_deliveries(&cms, &team).await;
        let webhook = format!("/api/v3/teams/{team}/webhooks/11111111-1111-4111-8111-111111111111");
        let log = api.get_ok(&format!("{webhook}/deliveries")).await;
        assert_eq!(log["meta"]["to"], 2, "{log}");
        let data = log["data"].as_array().unwrap();
        let uuids: Vec<&str> = data.iter().map(|d| d["uuid"].as_str().unwrap()).collect();
        assert_eq!(uuids, ["d-new", "d-old"], "newest first");
        let failed = &data[0];
        assert_eq!(
            (failed["event_id"].as_str(), failed["event_type"].as_str()),
            (Some("evt_new"), Some("charger.connected"))
        );
        assert_eq!(
            (failed["state"].as_str(), failed["last_error"].as_str()),
            (Some("failed"), Some("timed out"))
        );
        assert_eq!(failed["next_attempt_at"], Value::Null);
        let old = &data[1];
        assert_eq!(
            (old["attempts"].as_i64(), old["last_status"].as_i64()),
            (Some(2), Some(200))
        );
        assert_eq!(old["delivered_at"], T1);
        let log: Vec<(Value, Value, Value)> = old["attempt_log"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["attempted_at"].clone(),
                    a["status_code"].clone(),
                    a["error"].clone(),
                )
            })
            .collect();
        assert_eq!(
            log,
            [
                (T0.into(), 500.into(), "oops".into()),
                (T1.into(), 200.into(), Value::Null)
            ]
        );
        assert_eq!(old["attempt_log"][0]["latency_ms"], 42);

        // Redelivered: pending again, due now, the same event.
        let answer = api
            .expect(
                202,
                "POST",
                &format!("{webhook}/deliveries/d-new/redeliver"),
                None,
            )
            .await;
        assert_eq!(answer["data"]["state"], "pending");
        let log = api.get_ok(&format!("{webhook}/deliveries")).await;
        let again = &log["data"][0];
        assert_eq!(
            (
                again["uuid"].as_str(),
                again["state"].as_str(),
                again["event_id"].as_str()
            ),
            (Some("d-new"), Some("pending"), Some("evt_new"))
        );
        assert!(again["next_attempt_at"].is_string());

        // Unknown webhook or delivery: 404; a page that is no number: 422.
        let missing = format!(
            "/api/v3/teams/{team}/webhooks/22222222-2222-4222-8222-222222222222/deliveries"
        );
        assert_eq!(
            api.expect(404, "GET", &missing, None).await["message"],
            "Webhook not found."
        );
        api.expect(
            404,
            "POST",
            &format!("{webhook}/deliveries/no-such/redeliver"),
            None,
        )
        .await;
        api.expect_invalid("GET", &format!("{webhook}/deliveries?page=x"), None)
            .await;
    }
);

on_both_stores!(
    another_team_neither_reads_nor_redelivers_a_webhooks_deliveries,
    |cms| {
        let operator = Api::new(&cms, &cms.operator_token().await);
        let team = uuid_of(&team_of_type(&operator, "operators").await);
        webhook_with_deliveries(&cms, &team).await;
        let webhook = format!("/api/v3/teams/{team}/webhooks/11111111-1111-4111-8111-111111111111");
        let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
        guest
            .expect(404, "GET", &format!("{webhook}/deliveries"), None)
            .await;
        guest
            .expect(
                404,
                "POST",
                &format!("{webhook}/deliveries/d-new/redeliver"),
                None,
            )
            .await;
        // Reading needs teams:read, redelivering teams:write.
        let reader = Api::new(
            &cms,
            &cms.create_token("operator@example.com", Some("teams:read"))
                .await,
        );
        reader.get_ok(&format!("{webhook}/deliveries")).await;
        reader
            .expect(
                403,
                "POST",
                &format!("{webhook}/deliveries/d-new/redeliver"),
                None,
            )
            .await;
        let log = operator.get_ok(&format!("{webhook}/deliveries")).await;
        assert_eq!(log["data"][0]["state"], "failed", "not redelivered");
    }
);
