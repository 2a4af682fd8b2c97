//! The store side of OCPI delivery, on both backends: the lease and its fence, the cursor over
//! the events outbox (replayed after a crash, never written twice), one push at a time per
//! (provider, object), retries scheduled, and a new holder going on where the last one stopped.

use super::*;
use crate::ocpi::parties::PartyConnection;
use crate::ocpi::pushes::{PushAttempt, PushOutcome};
use crate::providers::NewProvider;
use crate::test_support::store_test;

const T0: &str = "2026-11-24T12:00:00.000000Z";
const T5: &str = "2026-11-24T12:00:05.000000Z";
const T10: &str = "2026-11-24T12:00:10.000000Z";
const T11: &str = "2026-11-24T12:00:11.000000Z";
const T20: &str = "2026-11-24T12:00:20.000000Z";
const T21: &str = "2026-11-24T12:00:21.000000Z";
const LATER: &str = "2026-11-24T13:00:00.000000Z";

async fn scalar(store: &Store, sql: &str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(&store.pool)
        .await
        .unwrap()
}

/// A team with a CPO identity and a provider registered over OCPI; (team id, provider id).
async fn party(store: &Store, name: &str) -> (i64, i64) {
    let team: i64 = sqlx::query_scalar(
        "INSERT INTO teams (uuid, name, type, created_at, updated_at)
         VALUES ($1, $2, 'organization', $3, $3) RETURNING id",
    )
    .bind(format!("team-{name}"))
    .bind(name)
    .bind(T0)
    .fetch_one(&store.pool)
    .await
    .unwrap();
    sqlx::query(
        "INSERT INTO ocpi_cpo (team_id, country_code, party_id, name, updated_at)
         VALUES ($1, 'NL', 'CMS', 'cms', $2)",
    )
    .bind(team)
    .bind(T0)
    .execute(&store.pool)
    .await
    .unwrap();
    let new = NewProvider {
        name: name.into(),
        country_code: "DE".into(),
        party_id: "EMP".into(),
        tariff_id: None,
    };
    let provider = store.create_provider(team, &new).await.unwrap();
    let connection = PartyConnection {
        incoming_token_hash: crate::ocpi::token_hash(&format!("in-{name}")),
        outgoing_token: Some(format!("out-{name}")),
        status: "registered".into(),
        versions_url: None,
        endpoints: None,
        roles: None,
    };
    store
        .ocpi_save_party(provider.id, &connection)
        .await
        .unwrap();
    (team, provider.id)
}

/// An event of `team` in the outbox, written long before the tests' times (settled); its seq.
async fn event(store: &Store, team: i64, subject: &str, created_at: &str) -> i64 {
    sqlx::query_scalar(
        "INSERT INTO webhook_events (event_id, type, subject, team_id, data, occurred_at,
           received_at, created_at)
         VALUES ($1, 'connector.status_changed', $2, $3, '{\"connector_id\":1}', $4, $4, $4)
         RETURNING seq",
    )
    .bind(format!("evt_{}", uuid::Uuid::new_v4().simple()))
    .bind(subject)
    .bind(team)
    .bind(created_at)
    .fetch_one(&store.pool)
    .await
    .unwrap()
}

fn push(provider_id: i64, object_key: &str, path: &str) -> NewPush {
    NewPush {
        provider_id,
        object_key: object_key.into(),
        module: "locations".into(),
        method: "PATCH".into(),
        path: path.into(),
        body: Some(r#"{"status":"AVAILABLE"}"#.into()),
    }
}

/// The due pushes' paths.
async fn due(store: &Store, now: &str) -> Vec<String> {
    let due = store.due_ocpi_pushes(now, 100).await.unwrap();
    due.into_iter().map(|p| p.path).collect()
}

fn ended(push_id: i64, outcome: PushOutcome, error: Option<&str>) -> PushAttempt {
    PushAttempt {
        push_id,
        outcome,
        error: error.map(str::to_string),
    }
}

store_test!(
    one_ocpi_dispatcher_holds_the_lease_and_fences_its_writes,
    |store| {
        let (team, provider) = party(&store, "a").await;
        event(&store, team, "cp-1", "2026-01-01T00:00:00.000000Z").await;
        assert!(store.take_ocpi_lease("a", T0, T10).await.unwrap());
        assert!(!store.take_ocpi_lease("b", T5, T20).await.unwrap(), "a's");
        assert!(
            store.take_ocpi_lease("a", T5, T20).await.unwrap(),
            "renewed"
        );
        assert!(!store.take_ocpi_lease("b", T11, T20).await.unwrap());
        let read = store.ocpi_events_past_cursor("a", T11, 10).await.unwrap();
        let read = read.expect("a holds it");
        assert!(
            store.take_ocpi_lease("b", T21, LATER).await.unwrap(),
            "run out"
        );
        // a's writes after its lease ran out do nothing.
        assert_eq!(
            store.ocpi_events_past_cursor("a", T21, 10).await.unwrap(),
            None
        );
        let pushes = [push(provider, "location:s", "/NL/CMS/s")];
        assert!(!store.ocpi_fan_out("a", T21, &read, &pushes).await.unwrap());
        assert!(!store.ocpi_enqueue_holding("a", T21, &pushes).await.unwrap());
        assert_eq!(scalar(&store, "SELECT COUNT(*) FROM ocpi_pushes").await, 0);
        assert_eq!(
            scalar(&store, "SELECT last_seq FROM ocpi_dispatcher").await,
            0
        );
        // b's go through; a's attempt of b's push is not recorded.
        assert!(store.ocpi_enqueue_holding("b", T21, &pushes).await.unwrap());
        let id = store.due_ocpi_pushes(T21, 10).await.unwrap()[0].id;
        let delivered = [ended(id, PushOutcome::Delivered, None)];
        assert!(
            !store
                .record_ocpi_push_attempts("a", T21, &delivered)
                .await
                .unwrap()
        );
        assert_eq!(due(&store, T21).await, ["/NL/CMS/s"], "still pending");
        // Released, it is the first comer's at once.
        store.release_ocpi_lease("b").await.unwrap();
        assert!(store.take_ocpi_lease("a", T21, LATER).await.unwrap());
    }
);

store_test!(events_past_the_cursor_become_pushes_once, |store| {
    let (team, provider) = party(&store, "a").await;
    let settled = "2026-01-01T00:00:00.000000Z";
    let first = event(&store, team, "cp-1", settled).await;
    let second = event(&store, team, "cp-2", settled).await;
    // Written a moment before now: it may yet be preceded by another writer's event.
    event(&store, team, "cp-1", T10).await;
    assert!(store.take_ocpi_lease("a", T10, LATER).await.unwrap());
    let read = store
        .ocpi_events_past_cursor("a", T10, 10)
        .await
        .unwrap()
        .unwrap();
    let seqs: Vec<i64> = read.events.iter().map(|e| e.seq).collect();
    assert_eq!(seqs, [first, second], "the young one waits");
    assert_eq!((read.cursor, read.last, read.read), (0, second, 3));
    assert_eq!(read.events[0].team_id, Some(team));
    assert_eq!(read.events[0].data["connector_id"], 1);
    // A crash before the pushes were written: the same events are read again.
    let again = store
        .ocpi_events_past_cursor("a", T10, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(again, read);
    let pushes = [
        push(provider, "location:s", "/NL/CMS/s/1"),
        push(provider, "location:s", "/NL/CMS/s/2"),
    ];
    assert!(store.ocpi_fan_out("a", T10, &read, &pushes).await.unwrap());
    assert_eq!(
        scalar(&store, "SELECT last_seq FROM ocpi_dispatcher").await,
        second
    );
    // The same read written again (a second writer of it) writes nothing.
    assert!(!store.ocpi_fan_out("a", T10, &again, &pushes).await.unwrap());
    assert_eq!(scalar(&store, "SELECT COUNT(*) FROM ocpi_pushes").await, 2);
    // Past the cursor now: only the young one, once settled.
    let next = store
        .ocpi_events_past_cursor("a", T20, 10)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(next.events.len(), 1);
    assert_eq!(next.cursor, second);
});

store_test!(pushes_of_an_object_go_one_at_a_time_oldest_first, |store| {
    let (_, provider) = party(&store, "a").await;
    let (_, other) = party(&store, "b").await;
    assert!(store.take_ocpi_lease("a", T0, LATER).await.unwrap());
    let pushes = [
        push(provider, "location:s", "/s/1"),
        push(provider, "location:t", "/t/1"),
        push(provider, "location:s", "/s/2"),
        push(other, "location:s", "/other/s/1"),
        push(provider, "location:s", "/s/3"),
    ];
    assert!(store.ocpi_enqueue_holding("a", T0, &pushes).await.unwrap());
    assert_eq!(due(&store, T0).await, ["/s/1", "/t/1", "/other/s/1"]);
    let id_of = |due: &[crate::ocpi::pushes::DuePush], path: &str| {
        due.iter().find(|p| p.path == path).unwrap().id
    };
    let all = store.due_ocpi_pushes(T0, 100).await.unwrap();
    let (s1, t1) = (id_of(&all, "/s/1"), id_of(&all, "/t/1"));
    // s/1 fails and is retried at T10: s/2 waits behind it; t's object goes on.
    let failed = ended(
        s1,
        PushOutcome::Retry { at: T10.into() },
        Some("answered 503"),
    );
    let delivered = ended(t1, PushOutcome::Delivered, None);
    let both = [failed, delivered];
    assert!(
        store
            .record_ocpi_push_attempts("a", T5, &both)
            .await
            .unwrap()
    );
    assert_eq!(due(&store, T5).await, ["/other/s/1"]);
    assert_eq!(due(&store, T10).await, ["/other/s/1", "/s/1"]);
    // Its retries spent, it fails; the next of its object may go.
    let failed = ended(s1, PushOutcome::Failed, Some("answered 503"));
    assert!(
        store
            .record_ocpi_push_attempts("a", T10, &[failed])
            .await
            .unwrap()
    );
    assert_eq!(due(&store, T10).await, ["/s/2", "/other/s/1"]);
    assert_eq!(store.ocpi_pushes_pending().await.unwrap(), 3);
});

store_test!(
    a_retried_push_is_due_again_at_its_time_and_logged,
    |store| {
        let (_, provider) = party(&store, "a").await;
        let (_, other) = party(&store, "b").await;
        assert!(store.take_ocpi_lease("a", T0, LATER).await.unwrap());
        let pushes = [
            push(provider, "location:s", "/s/1"),
            push(provider, "location:s", "/s/2"),
            push(other, "location:s", "/other"),
        ];
        assert!(store.ocpi_enqueue_holding("a", T0, &pushes).await.unwrap());
        let first = store.due_ocpi_pushes(T0, 10).await.unwrap().remove(0);
        assert_eq!(first.attempts, 0);
        assert_eq!(
            (
                first.cpo_country_code.as_deref(),
                first.cpo_party_id.as_deref()
            ),
            (Some("NL"), Some("CMS"))
        );
        let retry = ended(
            first.id,
            PushOutcome::Retry { at: T10.into() },
            Some("timed out"),
        );
        assert!(
            store
                .record_ocpi_push_attempts("a", T0, &[retry])
                .await
                .unwrap()
        );
        let (log, total) = store
            .ocpi_pushes_of_provider(provider, 25, 0)
            .await
            .unwrap();
        assert_eq!(total, 2, "the provider's own only");
        let paths: Vec<&str> = log.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(paths, ["/s/2", "/s/1"], "newest first");
        let retried = &log[1];
        assert_eq!(
            (
                retried.state.as_str(),
                retried.attempts,
                retried.last_error.as_deref()
            ),
            ("pending", 1, Some("timed out"))
        );
        assert_eq!(retried.next_attempt_at.as_deref(), Some(T10));
        assert_eq!(
            (retried.module.as_str(), retried.method.as_str()),
            ("locations", "PATCH")
        );
        // The dispatcher restarts (a new holder once the old lease ran out): the retry is still due
        // at T10, its attempts counted.
        store.release_ocpi_lease("a").await.unwrap();
        assert!(store.take_ocpi_lease("restarted", T5, LATER).await.unwrap());
        assert!(!due(&store, T5).await.contains(&"/s/1".to_string()));
        let again = store.due_ocpi_pushes(T10, 10).await.unwrap();
        let again = again.into_iter().find(|p| p.path == "/s/1").unwrap();
        assert_eq!(again.attempts, 1);
        let delivered = [ended(again.id, PushOutcome::Delivered, None)];
        let recorded = store.record_ocpi_push_attempts("restarted", T11, &delivered);
        assert!(recorded.await.unwrap());
        let (log, _) = store.ocpi_pushes_of_provider(provider, 1, 1).await.unwrap();
        assert_eq!(
            (
                log[0].state.as_str(),
                log[0].attempts,
                log[0].delivered_at.as_deref()
            ),
            ("delivered", 2, Some(T11))
        );
        assert_eq!(
            (
                log[0].next_attempt_at.as_deref(),
                log[0].last_error.as_deref()
            ),
            (None, None)
        );
        assert_eq!(due(&store, T11).await, ["/s/2", "/other"]);
    }
);
