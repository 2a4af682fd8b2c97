//! The store side of delivery, on both backends: the lease, fan-out to whom may see an event,
//! the order of what is due, an attempt's outcome, the log and redelivery.

use super::*;
use crate::test_support::{charger_id, store_test};
use serde_json::Value;

const T0: &str = "2026-11-24T12:00:00.000000Z";
const T5: &str = "2026-11-24T12:00:05.000000Z";
const T10: &str = "2026-11-24T12:00:10.000000Z";
const T11: &str = "2026-11-24T12:00:11.000000Z";
const T20: &str = "2026-11-24T12:00:20.000000Z";
const LATER: &str = "2026-11-24T13:00:00.000000Z";

async fn exec(store: &Store, sql: &str) {
    sqlx::query(sql).execute(&store.pool).await.unwrap();
}

async fn scalar(store: &Store, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(&store.pool)
        .await
        .unwrap()
}

/// A new team; its id.
async fn team(store: &Store, name: &str) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO teams (uuid, name, type, created_at, updated_at)
         VALUES ($1, $2, 'organization', $3, $3) RETURNING id",
    )
    .bind(format!("team-{name}"))
    .bind(name)
    .bind(T0)
    .fetch_one(&store.pool)
    .await
    .unwrap()
}

/// A webhook of `team_id` asking for `types`; its id.
async fn webhook(store: &Store, team_id: i64, name: &str, types: &[&str]) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO webhooks (uuid, team_id, url, event_types, secret, created_at, updated_at)
         VALUES ($1, $2, 'https://example.com/hook', $3, 'whsec_c2VjcmV0', $4, $4) RETURNING id",
    )
    .bind(format!("wh-{name}"))
    .bind(team_id)
    .bind(serde_json::to_string(types).unwrap())
    .bind(T0)
    .fetch_one(&store.pool)
    .await
    .unwrap()
}

/// An event in the outbox about charger `charger` (its site and owner team); its seq.
async fn event(store: &Store, kind: &str, charger: i64, subject: &str, sensitive: bool) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO webhook_events (event_id, type, subject, team_id, site_id, charger_id,
           sensitive, data, occurred_at, received_at, created_at)
         -- Written well before any fan-out of the tests: settled.
         SELECT $1, $2, $3, s.team_id, s.id, c.id, $4, $5, $6, $6, '2026-01-01T00:00:00.000000Z'
         FROM chargers c JOIN sites s ON s.id = c.site_id WHERE c.id = $7 RETURNING seq",
    )
    .bind(format!("evt_{}", uuid::Uuid::new_v4().simple()))
    .bind(kind)
    .bind(subject)
    .bind(i64::from(sensitive))
    .bind(format!(
        r#"{{"charger_uuid":"uuid-{subject}","identity":"{subject}","connector_id":1}}"#
    ))
    .bind(T0)
    .bind(charger)
    .fetch_one(&store.pool)
    .await
    .unwrap()
}

async fn owner_team(store: &Store, charger: i64) -> (i64, i64) {
    let row: (i64, i64) = sqlx::query_as(
        "SELECT s.team_id, s.id FROM chargers c JOIN sites s ON s.id = c.site_id WHERE c.id = $1",
    )
    .bind(charger)
    .fetch_one(&store.pool)
    .await
    .unwrap();
    row
}

/// Site access for `team_id` on `site_id`; its id.
async fn access(store: &Store, site: i64, team_id: i64, all: bool, sensitive: Option<&str>) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO site_access (site_id, team_id, can_access_all_assets, sensitive_data,
           sensitive_data_expires_at, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id",
    )
    .bind(site)
    .bind(team_id)
    .bind(i64::from(all))
    .bind(i64::from(sensitive.is_some()))
    .bind(sensitive.filter(|until| !until.is_empty()))
    .bind(T0)
    .fetch_one(&store.pool)
    .await
    .unwrap()
}

/// The webhooks each delivery went to, by webhook id then event seq.
async fn deliveries(store: &Store) -> Vec<(i64, i64)> {
    sqlx::query_as(
        "SELECT webhook_id, event_seq FROM webhook_deliveries ORDER BY webhook_id, event_seq",
    )
    .fetch_all(&store.pool)
    .await
    .unwrap()
}

fn attempt(status: Option<i64>) -> Attempt {
    Attempt {
        attempted_at: T0.into(),
        status_code: status,
        latency_ms: 12,
        error: status
            .filter(|s| *s >= 300)
            .map(|s| format!("answered {s}")),
    }
}

store_test!(one_dispatcher_holds_the_lease_until_it_runs_out, |store| {
    assert!(store.take_webhook_lease("a", T0, T10).await.unwrap());
    assert!(
        !store.take_webhook_lease("b", T5, T20).await.unwrap(),
        "held by a"
    );
    assert!(
        store.take_webhook_lease("a", T5, T20).await.unwrap(),
        "renewed"
    );
    assert!(
        !store.take_webhook_lease("b", T11, T20).await.unwrap(),
        "renewed past T11"
    );
    // Run out, the lease is b's; a's fenced writes do nothing.
    assert!(
        store
            .take_webhook_lease("b", "2026-11-24T12:00:21.000000Z", LATER)
            .await
            .unwrap()
    );
    let charger = charger_id(&store, "cp-1").await;
    let (owner, _) = owner_team(&store, charger).await;
    webhook(&store, owner, "a", &["charger.connected"]).await;
    event(&store, "charger.connected", charger, "cp-1", false).await;
    assert_eq!(
        store.fan_out_webhook_events("a", T20, 100).await.unwrap(),
        None
    );
    assert!(deliveries(&store).await.is_empty());
    assert_eq!(
        scalar(&store, "SELECT last_seq FROM webhook_dispatcher").await,
        0
    );
    // Released, it is the first comer's at once.
    store.release_webhook_lease("b").await.unwrap();
    assert!(store.take_webhook_lease("a", T20, LATER).await.unwrap());
});

store_test!(
    events_fan_out_to_the_webhooks_whose_team_may_see_them,
    |store| {
        let charger = charger_id(&store, "cp-1").await;
        let other_charger = charger_id(&store, "cp-2").await;
        let (owner, site) = owner_team(&store, charger).await;
        let types = ["charger.connected", "transaction.ended"];
        let own = webhook(&store, owner, "own", &types).await;
        let own_other_type = webhook(&store, owner, "other-type", &["charger.booted"]).await;
        let own_disabled = webhook(&store, owner, "disabled", &types).await;
        exec(
            &store,
            &format!("UPDATE webhooks SET enabled = 0 WHERE id = {own_disabled}"),
        )
        .await;
        let stranger = webhook(&store, team(&store, "stranger").await, "stranger", &types).await;
        let all_team = team(&store, "all").await;
        access(&store, site, all_team, true, None).await;
        let all = webhook(&store, all_team, "all", &types).await;
        let listed_team = team(&store, "listed").await;
        let listed_access = access(&store, site, listed_team, false, None).await;
        exec(&store, &format!("INSERT INTO site_access_assets (site_access_id, charger_id) VALUES ({listed_access}, {other_charger})")).await;
        let listed = webhook(&store, listed_team, "listed", &types).await;
        let sensitive_team = team(&store, "sensitive").await;
        access(&store, site, sensitive_team, true, Some(LATER)).await;
        let sensitive = webhook(&store, sensitive_team, "sensitive", &types).await;
        let expired_team = team(&store, "expired").await;
        access(&store, site, expired_team, true, Some(T5)).await;
        let expired = webhook(&store, expired_team, "expired", &types).await;

        let connected = event(&store, "charger.connected", charger, "cp-1", false).await;
        let ended = event(&store, "transaction.ended", charger, "cp-1", true).await;
        let other = event(&store, "charger.connected", other_charger, "cp-2", false).await;
        assert!(store.take_webhook_lease("a", T10, LATER).await.unwrap());
        let done = store
            .fan_out_webhook_events("a", T10, 100)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            done.event_types,
            [
                "charger.connected",
                "transaction.ended",
                "charger.connected"
            ]
        );
        let mut expected = vec![
            (own, connected),
            (own, ended),
            (own, other),
            (all, connected),
            (all, other),
            (listed, other),
            (sensitive, connected),
            (sensitive, ended),
            (sensitive, other),
            (expired, connected),
            (expired, other),
        ];
        expected.sort();
        assert_eq!(deliveries(&store).await, expected);
        assert_eq!(done.deliveries, expected.len() as u64);
        for nobody in [own_other_type, own_disabled, stranger] {
            assert!(!deliveries(&store).await.iter().any(|(w, _)| *w == nobody));
        }
        assert_eq!(
            scalar(&store, "SELECT last_seq FROM webhook_dispatcher").await,
            other
        );
        // The cursor moved: a second round finds nothing.
        let again = store
            .fan_out_webhook_events("a", T10, 100)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(again, FannedOut::default());

        // The body is the envelope, addressed to the receiving team.
        let body: String = sqlx::query_scalar(&format!(
        "SELECT body FROM webhook_deliveries WHERE webhook_id = {all} AND event_seq = {connected}"
    ))
    .fetch_one(&store.pool)
    .await
    .unwrap();
        let body: Value = serde_json::from_str(&body).unwrap();
        assert!(body["id"].as_str().unwrap().starts_with("evt_"));
        assert_eq!(body["type"], "charger.connected");
        assert_eq!(body["version"], 1);
        assert_eq!(body["timestamp"], T0);
        assert_eq!(body["team_uuid"], "team-all");
        assert_eq!(
            body["resource"],
            serde_json::json!({"type": "charger", "uuid": "uuid-cp-1", "identity": "cp-1"})
        );
        assert_eq!(body["data"]["connector_id"], 1);
    }
);

store_test!(
    only_the_oldest_pending_delivery_of_a_subject_is_due,
    |store| {
        let one = charger_id(&store, "cp-1").await;
        let two = charger_id(&store, "cp-2").await;
        let (owner, _) = owner_team(&store, one).await;
        webhook(&store, owner, "own", &["charger.connected"]).await;
        for _ in 0..3 {
            event(&store, "charger.connected", one, "cp-1", false).await;
        }
        event(&store, "charger.connected", two, "cp-2", false).await;
        assert!(store.take_webhook_lease("a", T0, LATER).await.unwrap());
        store
            .fan_out_webhook_events("a", T0, 100)
            .await
            .unwrap()
            .unwrap();
        let due = store.due_webhook_deliveries(T0, 100).await.unwrap();
        let subjects: Vec<&str> = due.iter().map(|d| d.subject.as_str()).collect();
        assert_eq!(subjects, ["cp-1", "cp-2"], "one of each subject");
        assert_eq!(due[0].secrets, ["whsec_c2VjcmV0"]);
        assert_eq!(due[0].url, "https://example.com/hook");
        let first = due[0].clone();
        // Retried later, cp-1's first still holds back cp-1's others.
        let retry = Outcome::Retry { at: T10.into() };
        assert!(
            store
                .record_webhook_attempt("a", T0, first.id, &attempt(Some(500)), &retry)
                .await
                .unwrap()
        );
        let due = store.due_webhook_deliveries(T5, 100).await.unwrap();
        assert_eq!(
            due.iter().map(|d| d.subject.as_str()).collect::<Vec<_>>(),
            ["cp-2"]
        );
        let due = store.due_webhook_deliveries(T10, 100).await.unwrap();
        let subjects: Vec<&str> = due.iter().map(|d| d.subject.as_str()).collect();
        assert_eq!(subjects, ["cp-2", "cp-1"], "the longest due first");
        assert_eq!(due[1].id, first.id, "due again at its time");
        assert_eq!(due[1].attempts, 1);
        // Delivered, the next of cp-1 is due, in order.
        store
            .record_webhook_attempt("a", T10, first.id, &attempt(Some(200)), &Outcome::Delivered)
            .await
            .unwrap();
        let due = store.due_webhook_deliveries(T10, 2).await.unwrap();
        assert!(
            due[0].id > first.id && due[0].subject == "cp-1",
            "waited since T0"
        );
        let bounded = store.due_webhook_deliveries(T10, 1).await.unwrap();
        assert_eq!(bounded.len(), 1);
        // A rotation's previous secret signs too, until its time.
        exec(&store, &format!("UPDATE webhooks SET previous_secret = 'whsec_b2xk', previous_secret_until = '{T11}'")).await;
        assert_eq!(
            store.due_webhook_deliveries(T10, 1).await.unwrap()[0].secrets,
            ["whsec_c2VjcmV0", "whsec_b2xk"]
        );
        assert_eq!(
            store.due_webhook_deliveries(T20, 1).await.unwrap()[0].secrets,
            ["whsec_c2VjcmV0"]
        );
    }
);

store_test!(
    an_attempt_s_outcome_marks_the_delivery_and_the_webhook,
    |store| {
        let charger = charger_id(&store, "cp-1").await;
        let (owner, _) = owner_team(&store, charger).await;
        let hook = webhook(&store, owner, "own", &["charger.connected"]).await;
        event(&store, "charger.connected", charger, "cp-1", false).await;
        event(&store, "charger.connected", charger, "cp-1", false).await;
        assert!(store.take_webhook_lease("a", T0, LATER).await.unwrap());
        store
            .fan_out_webhook_events("a", T0, 100)
            .await
            .unwrap()
            .unwrap();
        let first = store.due_webhook_deliveries(T0, 1).await.unwrap().remove(0);
        // Not holding the lease, nothing is written.
        assert!(
            !store
                .record_webhook_attempt("b", T0, first.id, &attempt(Some(200)), &Outcome::Delivered)
                .await
                .unwrap()
        );
        assert_eq!(
            scalar(&store, "SELECT COUNT(*) FROM webhook_attempts").await,
            0
        );
        // The last retry failed: failed, and the webhook failing since then.
        store
            .record_webhook_attempt("a", T5, first.id, &attempt(Some(503)), &Outcome::Failed)
            .await
            .unwrap();
        let failing: Option<String> = sqlx::query_scalar("SELECT failing_since FROM webhooks")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(failing.as_deref(), Some(T5));
        assert_eq!(store.webhook_delivery_gauges().await.unwrap(), (1, 1));
        // A later success clears it.
        let second = store.due_webhook_deliveries(T5, 1).await.unwrap().remove(0);
        assert_ne!(
            second.id, first.id,
            "the failed one no longer holds its subject back"
        );
        store
            .record_webhook_attempt(
                "a",
                T10,
                second.id,
                &attempt(Some(204)),
                &Outcome::Delivered,
            )
            .await
            .unwrap();
        assert_eq!(store.webhook_delivery_gauges().await.unwrap(), (0, 0));
        // 410: the webhook disabled as gone, its delivery still pending.
        assert!(
            store
                .redeliver_webhook_delivery(owner, "wh-own", &second.uuid, T10)
                .await
                .unwrap()
        );
        let again = store
            .due_webhook_deliveries(T10, 1)
            .await
            .unwrap()
            .remove(0);
        assert_eq!(
            (again.id, again.event_id.clone(), again.body.clone()),
            (second.id, second.event_id.clone(), second.body.clone()),
            "same body and id"
        );
        store
            .record_webhook_attempt("a", T11, again.id, &attempt(Some(410)), &Outcome::Gone)
            .await
            .unwrap();
        let (enabled, reason): (i64, Option<String>) = sqlx::query_as(&format!(
            "SELECT enabled, disabled_reason FROM webhooks WHERE id = {hook}"
        ))
        .fetch_one(&store.pool)
        .await
        .unwrap();
        assert_eq!((enabled, reason.as_deref()), (0, Some("gone")));
        assert_eq!(store.webhook_delivery_gauges().await.unwrap(), (1, 0));
        assert!(
            store
                .due_webhook_deliveries(LATER, 10)
                .await
                .unwrap()
                .is_empty(),
            "not sent while disabled"
        );
    }
);

store_test!(
    the_log_shows_deliveries_newest_first_with_their_attempts,
    |store| {
        let charger = charger_id(&store, "cp-1").await;
        let (owner, _) = owner_team(&store, charger).await;
        webhook(
            &store,
            owner,
            "own",
            &["charger.connected", "charger.booted"],
        )
        .await;
        event(&store, "charger.connected", charger, "cp-1", false).await;
        event(&store, "charger.booted", charger, "cp-1", false).await;
        assert!(store.take_webhook_lease("a", T0, LATER).await.unwrap());
        store
            .fan_out_webhook_events("a", T0, 100)
            .await
            .unwrap()
            .unwrap();
        let first = store.due_webhook_deliveries(T0, 1).await.unwrap().remove(0);
        let retry = Outcome::Retry { at: T5.into() };
        store
            .record_webhook_attempt("a", T0, first.id, &attempt(Some(500)), &retry)
            .await
            .unwrap();
        store
            .record_webhook_attempt("a", T5, first.id, &attempt(Some(200)), &Outcome::Delivered)
            .await
            .unwrap();

        let (page, total) = store
            .webhook_deliveries(owner, "wh-own", 1, 0)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(total, 2);
        assert_eq!(page.len(), 1);
        assert_eq!(
            (page[0].event_type.as_str(), page[0].state.as_str()),
            ("charger.booted", "pending")
        );
        assert_eq!(page[0].next_attempt_at.as_deref(), Some(T0));
        assert!(page[0].attempt_log.is_empty());
        let (page, _) = store
            .webhook_deliveries(owner, "wh-own", 1, 1)
            .await
            .unwrap()
            .unwrap();
        let delivered = &page[0];
        assert_eq!(
            (delivered.uuid.as_str(), delivered.state.as_str()),
            (first.uuid.as_str(), "delivered")
        );
        assert_eq!((delivered.attempts, delivered.last_status), (2, Some(200)));
        assert_eq!(delivered.delivered_at.as_deref(), Some(T5));
        assert_eq!(delivered.next_attempt_at, None);
        let statuses: Vec<Option<i64>> = delivered
            .attempt_log
            .iter()
            .map(|a| a.status_code)
            .collect();
        assert_eq!(statuses, [Some(500), Some(200)]);
        assert_eq!(
            delivered.attempt_log[0].error.as_deref(),
            Some("answered 500")
        );
        assert_eq!(delivered.attempt_log[0].latency_ms, 12);

        // Another team sees no such webhook, nor redelivers its deliveries.
        let stranger = team(&store, "stranger").await;
        assert_eq!(
            store
                .webhook_deliveries(stranger, "wh-own", 10, 0)
                .await
                .unwrap(),
            None
        );
        assert!(
            !store
                .redeliver_webhook_delivery(stranger, "wh-own", &first.uuid, T10)
                .await
                .unwrap()
        );
        assert!(
            !store
                .redeliver_webhook_delivery(owner, "wh-own", "no-such", T10)
                .await
                .unwrap()
        );
    }
);
