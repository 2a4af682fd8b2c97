use super::*;
use crate::StateChange;
use crate::test_support::{charger_id, store_test};

fn new_action(charger_id: i64, uuid: &str, published: bool) -> NewAction {
    NewAction {
        uuid: uuid.into(),
        charger_id,
        session: "s-1".into(),
        action: "Reset".into(),
        request: r#"{"type":"Soft"}"#.into(),
        requested_by_type: "user".into(),
        requested_by_email: Some("op@example.com".into()),
        timeout_ms: 30_000,
        created_at: "2026-11-21T10:00:00.000000Z".into(),
        expires_at: "2026-11-21T10:01:00.000000Z".into(),
        ocpp_version: "1.6".into(),
        published,
    }
}

/// The times of a service that publishes the command line's actions: 2 minutes, 45 seconds.
const TIMES: ActionTimes = ActionTimes {
    ttl: std::time::Duration::from_secs(120),
    timeout: std::time::Duration::from_secs(45),
};

fn report(action: &NewAction, status: &str) -> StateChange {
    let finished = !matches!(status, "sent");
    StateChange::ActionReported(Box::new(ActionReported {
        identity: "CP-1".into(),
        action: action.clone(),
        status: status.into(),
        response: (status == "answered").then(|| r#"{"status":"Accepted"}"#.into()),
        error_code: (status == "failed").then(|| "NotSupported".into()),
        error_description: (status == "failed").then(|| "no".into()),
        sent_at: Some("2026-11-21T10:00:00.100000Z".into()),
        finished_at: finished.then(|| "2026-11-21T10:00:00.200000Z".into()),
        settings: None,
        credential: None,
        at: "2026-11-21T10:00:00.200000Z".into(),
    }))
}

/// CP-1 connects with `session` (through gateway gw-1).
async fn connect(store: &Store, session: &str) {
    let connected = StateChange::Connected {
        identity: "CP-1".into(),
        session: session.into(),
        server: "gw-1".into(),
        at: "2026-11-21T10:00:00.000000Z".into(),
        ocpp_version: Some("1.6".into()),
    };
    store.apply(&[connected]).await.unwrap();
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

store_test!(
    actions_move_forward_only_and_the_first_final_state_wins,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        let reset = new_action(charger, "a-1", true);
        store.insert_action(&reset).await.unwrap();
        let status = async || store.action(charger, "a-1").await.unwrap().unwrap();
        assert_eq!(status().await.status, "pending");

        store.apply(&[report(&reset, "sent")]).await.unwrap();
        let sent = status().await;
        assert_eq!(
            (sent.status.as_str(), sent.sent_at.as_deref()),
            ("sent", Some("2026-11-21T10:00:00.100000Z"))
        );
        store.apply(&[report(&reset, "answered")]).await.unwrap();
        // A replayed `sent` and a second final state change nothing.
        store
            .apply(&[report(&reset, "sent"), report(&reset, "failed")])
            .await
            .unwrap();
        let done = status().await;
        assert_eq!(done.status, "answered");
        assert_eq!(done.response.as_deref(), Some(r#"{"status":"Accepted"}"#));
        assert_eq!((done.error_code, done.identity.as_str()), (None, "CP-1"));
        assert_eq!(
            done.finished_at.as_deref(),
            Some("2026-11-21T10:00:00.200000Z")
        );
    }
);

store_test!(
    an_action_cms_took_itself_is_recorded_from_its_report,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        let mut read = new_action(charger, "sys-1", true);
        read.action = "GetConfiguration".into();
        read.requested_by_type = "system".into();
        read.requested_by_email = None;
        store.apply(&[report(&read, "answered")]).await.unwrap();
        let (page, total) = store.actions_page(charger, 25, 0).await.unwrap();
        assert_eq!(total, 1);
        assert_eq!(
            (
                page[0].action.as_str(),
                page[0].status.as_str(),
                page[0].requested_by_type.as_str()
            ),
            ("GetConfiguration", "answered", "system")
        );
    }
);

store_test!(the_audit_log_is_newest_first_and_paged, |store| {
    let charger = charger_id(&store, "CP-1").await;
    for n in 0..3 {
        store
            .insert_action(&new_action(charger, &format!("a-{n}"), true))
            .await
            .unwrap();
    }
    let (page, total) = store.actions_page(charger, 2, 0).await.unwrap();
    assert_eq!(total, 3);
    let uuids: Vec<&str> = page.iter().map(|a| a.uuid.as_str()).collect();
    assert_eq!(uuids, ["a-2", "a-1"]);
    let (rest, _) = store.actions_page(charger, 2, 2).await.unwrap();
    assert_eq!(rest[0].uuid, "a-0");
    // An action a gateway took before these, stored only now from its report, sorts by when
    // it was taken.
    let mut earlier = new_action(charger, "boot-read", true);
    earlier.created_at = "2026-11-21T09:59:00.000000Z".into();
    store.apply(&[report(&earlier, "answered")]).await.unwrap();
    let (all, _) = store.actions_page(charger, 25, 0).await.unwrap();
    let uuids: Vec<&str> = all.iter().map(|a| a.uuid.as_str()).collect();
    assert_eq!(uuids, ["a-2", "a-1", "a-0", "boot-read"]);
    let other = charger_id(&store, "CP-2").await;
    assert!(store.action(other, "a-0").await.unwrap().is_none());
});

store_test!(
    the_configuration_follows_answered_reads_and_accepted_changes,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        let setting = |key: &str, value: Option<&str>, readonly: bool| Setting {
            key: key.into(),
            value: value.map(str::to_string),
            readonly,
        };
        let with_settings = |uuid: &str, update: SettingsUpdate| {
            let mut change = report(&new_action(charger, uuid, true), "answered");
            if let StateChange::ActionReported(report) = &mut change {
                report.settings = Some(update);
            }
            change
        };
        let read_all = with_settings(
            "r-1",
            SettingsUpdate::Replace(vec![
                setting("HeartbeatInterval", Some("300"), false),
                setting("NumberOfConnectors", Some("2"), true),
                setting("Stale", None, false),
            ]),
        );
        store.apply(&[read_all]).await.unwrap();
        let changed = with_settings(
            "c-1",
            // As a user may spell it: OCPP's keys are case-insensitive.
            SettingsUpdate::Change {
                key: "heartbeatinterval".into(),
                value: "60".into(),
            },
        );
        store.apply(std::slice::from_ref(&changed)).await.unwrap();
        let heartbeat: Vec<(String, Option<String>)> = store
            .settings(charger)
            .await
            .unwrap()
            .into_iter()
            .filter(|s| s.key.eq_ignore_ascii_case("HeartbeatInterval"))
            .map(|s| (s.key, s.value))
            .collect();
        assert_eq!(
            heartbeat,
            [("HeartbeatInterval".to_string(), Some("60".to_string()))],
            "the charger's key changed, under its own name"
        );
        let read_again = with_settings(
            "r-2",
            SettingsUpdate::Replace(vec![
                setting("HeartbeatInterval", Some("60"), false),
                setting("NumberOfConnectors", Some("2"), true),
            ]),
        );
        store.apply(&[read_again]).await.unwrap();
        let read_one = with_settings(
            "r-3",
            SettingsUpdate::Upsert(vec![setting("MeterValueSampleInterval", Some("15"), false)]),
        );
        store.apply(&[read_one]).await.unwrap();
        // A replayed change (its action is final already) is not applied twice.
        store.apply(&[changed]).await.unwrap();
        let kept: Vec<(String, Option<String>, i64)> = store
            .settings(charger)
            .await
            .unwrap()
            .into_iter()
            .map(|s| (s.key, s.value, s.readonly))
            .collect();
        assert_eq!(
            kept,
            [
                ("HeartbeatInterval".to_string(), Some("60".to_string()), 0),
                (
                    "MeterValueSampleInterval".to_string(),
                    Some("15".to_string()),
                    0
                ),
                ("NumberOfConnectors".to_string(), Some("2".to_string()), 1),
            ]
        );
    }
);

/// Two actions of the command line, not published yet, for CP-1 (whose id it returns):
/// `cli-defaults` taken without times of its own, `cli-own` with its own (deadline 10:01:00,
/// 30 s to answer).
async fn two_command_line_actions(store: &Store) -> i64 {
    let charger = charger_id(store, "CP-1").await;
    let without = NewAction {
        timeout_ms: SERVICE_TIMES,
        ..new_action(charger, "cli-defaults", false)
    };
    store.insert_action(&without).await.unwrap();
    store
        .insert_action(&new_action(charger, "cli-own", false))
        .await
        .unwrap();
    charger
}

store_test!(
    an_action_taken_without_times_of_its_own_takes_those_of_the_service_that_claims_it,
    |store| {
        let charger = two_command_line_actions(&store).await;
        let claimed = store
            .claim_unpublished_actions(at("2026-11-21T10:00:01Z"), 10, TIMES)
            .await
            .unwrap();
        let times = |uuid: &str| {
            let row = claimed.iter().find(|a| a.uuid == uuid).unwrap();
            (row.expires_at.clone(), row.timeout_ms)
        };
        // Two minutes from when it was taken (10:00:00), not from the claim.
        let service = ("2026-11-21T10:02:00.000000Z".to_string(), 45_000);
        let own = ("2026-11-21T10:01:00.000000Z".to_string(), 30_000);
        assert_eq!(times("cli-defaults"), service);
        assert_eq!(times("cli-own"), own, "its own times are kept");
        let stored = |uuid: &'static str| {
            let store = store.clone();
            async move {
                let row = store.action(charger, uuid).await.unwrap().unwrap();
                (row.expires_at, row.timeout_ms)
            }
        };
        assert_eq!(stored("cli-defaults").await, service, "as stored");
        assert_eq!(stored("cli-own").await, own);
    }
);

store_test!(
    the_sweep_leaves_an_action_waiting_for_its_services_times_to_the_claim,
    |store| {
        let charger = two_command_line_actions(&store).await;
        // Both stand-in and own deadlines (10:01:00) long past, with the 30 s margin.
        let ended = store
            .expire_overdue_actions(at("2026-11-21T10:05:00Z"), chrono::Duration::seconds(30))
            .await
            .unwrap();
        assert_eq!(ended, 1, "only the action with its own deadline");
        let status = |uuid: &'static str| {
            let store = store.clone();
            async move { store.action(charger, uuid).await.unwrap().unwrap().status }
        };
        assert_eq!(status("cli-own").await, "expired");
        assert_eq!(status("cli-defaults").await, "pending");
        // Claimed, it holds the service's deadline (10:02:00), and is judged by it.
        store
            .claim_unpublished_actions(at("2026-11-21T10:05:00Z"), 10, TIMES)
            .await
            .unwrap();
        let ended = store
            .expire_overdue_actions(at("2026-11-21T10:05:00Z"), chrono::Duration::seconds(30))
            .await
            .unwrap();
        assert_eq!(ended, 1);
        assert_eq!(status("cli-defaults").await, "expired");
    }
);

store_test!(each_action_the_command_line_took_is_claimed_once, |store| {
    let charger = charger_id(&store, "CP-1").await;
    store
        .insert_action(&new_action(charger, "cli-1", false))
        .await
        .unwrap();
    store
        .insert_action(&new_action(charger, "rest-1", true))
        .await
        .unwrap();
    let now = at("2026-11-21T10:00:01Z");
    let claimed = store
        .claim_unpublished_actions(now, 10, TIMES)
        .await
        .unwrap();
    let uuids: Vec<&str> = claimed.iter().map(|a| a.uuid.as_str()).collect();
    assert_eq!(uuids, ["cli-1"]);
    assert!(
        store
            .claim_unpublished_actions(now, 10, TIMES)
            .await
            .unwrap()
            .is_empty()
    );
});

store_test!(
    actions_no_gateway_reported_on_are_ended_once_overdue,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        // Deadline 10:01:00; time-out 30 s.
        let waiting = new_action(charger, "waiting", true);
        let sent = new_action(charger, "sent", true);
        for action in [&waiting, &sent] {
            store.insert_action(action).await.unwrap();
        }
        store.apply(&[report(&sent, "sent")]).await.unwrap();
        let margin = chrono::Duration::seconds(30);
        // Sent at 10:00:00.1: its answer was due at 10:00:30.1; plus the margin, 10:01:00.1.
        let ended = store
            .expire_overdue_actions(at("2026-11-21T10:01:00Z"), margin)
            .await
            .unwrap();
        assert_eq!(ended, 0, "nothing is overdue yet");
        let ended = store
            .expire_overdue_actions(at("2026-11-21T10:01:01Z"), margin)
            .await
            .unwrap();
        assert_eq!(ended, 1);
        let timed_out = store.action(charger, "sent").await.unwrap().unwrap();
        assert_eq!(
            (timed_out.status.as_str(), timed_out.error_code.as_deref()),
            ("timed_out", Some("Timeout"))
        );
        let ended = store
            .expire_overdue_actions(at("2026-11-21T10:01:31Z"), margin)
            .await
            .unwrap();
        assert_eq!(ended, 1);
        let expired = store.action(charger, "waiting").await.unwrap().unwrap();
        assert_eq!(
            (expired.status.as_str(), expired.error_code.as_deref()),
            ("expired", Some("NotDelivered"))
        );
        // A late report changes neither.
        store.apply(&[report(&waiting, "answered")]).await.unwrap();
        let still = store.action(charger, "waiting").await.unwrap().unwrap();
        assert_eq!(still.status, "expired");
    }
);

store_test!(a_batch_of_reports_ends_as_if_applied_one_by_one, |store| {
    let charger = charger_id(&store, "CP-1").await;
    let [quick, twice, done] = ["b-1", "b-2", "b-3"].map(|uuid| new_action(charger, uuid, true));
    for action in [&quick, &twice, &done] {
        store.insert_action(action).await.unwrap();
    }
    store.apply(&[report(&done, "answered")]).await.unwrap();
    // Sent and answered in one batch, the answer not saying when it was sent.
    let mut answered = report(&quick, "answered");
    if let StateChange::ActionReported(r) = &mut answered {
        r.sent_at = None;
    }
    // An action cms took itself, sent and answered in the same batch as the rest, the
    // answer not saying when it was sent either.
    let mut read = new_action(charger, "b-sys", true);
    read.action = "GetConfiguration".into();
    let mut read_answered = report(&read, "answered");
    if let StateChange::ActionReported(r) = &mut read_answered {
        r.sent_at = None;
    }
    store
        .apply(&[
            report(&quick, "sent"),
            report(&twice, "answered"),
            report(&read, "sent"),
            answered,
            report(&twice, "failed"),
            report(&done, "sent"),
            read_answered,
        ])
        .await
        .unwrap();
    let row = async |uuid: &str| store.action(charger, uuid).await.unwrap().unwrap();
    let quick = row("b-1").await;
    assert_eq!(
        (quick.status.as_str(), quick.sent_at.as_deref()),
        ("answered", Some("2026-11-21T10:00:00.100000Z"))
    );
    assert_eq!(quick.response.as_deref(), Some(r#"{"status":"Accepted"}"#));
    let twice = row("b-2").await;
    assert_eq!(
        (twice.status.as_str(), twice.error_code),
        ("answered", None)
    );
    assert_eq!(row("b-3").await.status, "answered");
    let read = row("b-sys").await;
    assert_eq!(
        (read.status.as_str(), read.action.as_str()),
        ("answered", "GetConfiguration")
    );
    assert_eq!(read.sent_at.as_deref(), Some("2026-11-21T10:00:00.100000Z"));
});

store_test!(
    an_action_is_kept_for_the_live_session_or_not_at_all,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        let reset = new_action(charger, "l-1", true);
        // Never connected: nothing kept, nothing to send.
        assert_eq!(store.insert_live_action(&reset).await.unwrap(), None);
        assert_eq!(store.action(charger, "l-1").await.unwrap(), None);

        connect(&store, "s-live").await;
        // Addressed to the session the store knows, whatever the action said.
        assert_eq!(
            store.insert_live_action(&reset).await.unwrap().as_deref(),
            Some("s-live")
        );
        let kept = store.action(charger, "l-1").await.unwrap().unwrap();
        assert_eq!(
            (kept.session.as_str(), kept.status.as_str()),
            ("s-live", "pending")
        );

        let gone = StateChange::Disconnected {
            identity: "CP-1".into(),
            session: "s-live".into(),
            at: "2026-11-21T10:00:01.000000Z".into(),
        };
        store.apply(&[gone]).await.unwrap();
        let later = new_action(charger, "l-2", true);
        assert_eq!(store.insert_live_action(&later).await.unwrap(), None);
        assert_eq!(store.action(charger, "l-2").await.unwrap(), None);
    }
);

store_test!(
    actions_taken_at_once_or_abandoned_midway_are_all_kept_in_turn,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        connect(&store, "s-live").await;
        // A request whose client went away drops the insert midway, as it waits for the
        // connection or for its statement: the next ones are not held up behind it.
        let abandoned = new_action(charger, "c-abandoned", true);
        let _ = tokio::time::timeout(
            std::time::Duration::from_micros(1),
            store.insert_live_action(&abandoned),
        )
        .await;
        // Many requests at once take turns on the one connection; each is kept once.
        let actions: Vec<NewAction> = (0..40)
            .map(|n| new_action(charger, &format!("c-{n}"), true))
            .collect();
        let taken = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            futures_util::future::join_all(actions.iter().map(|a| store.insert_live_action(a))),
        )
        .await
        .expect("no insert waits behind an abandoned one");
        for inserted in taken {
            assert_eq!(inserted.unwrap().as_deref(), Some("s-live"));
        }
        let (_, total) = store.actions_page(charger, 1, 0).await.unwrap();
        // The abandoned one may or may not have been kept: it is the caller that gave up.
        assert!((40..=41).contains(&total), "{total} actions kept");
    }
);

store_test!(
    actions_taken_together_are_each_kept_or_not_by_their_own_charger,
    |store| {
        let online = charger_id(&store, "CP-1").await;
        let offline = charger_id(&store, "CP-2").await;
        connect(&store, "s-live").await;
        // Taken at once, so written together on SQLite: each answer is its own action's.
        let actions: Vec<NewAction> = (0..30)
            .map(|n| {
                let charger = if n % 3 == 0 { offline } else { online };
                new_action(charger, &format!("t-{n}"), n % 2 == 0)
            })
            // A uuid taken already: not kept twice. Unpublished as the first, so that the
            // outbox below holds `t-1` whichever of the two is kept (on PostgreSQL the
            // inserts race, and either may be first).
            .chain([new_action(online, "t-1", false)])
            .collect();
        let taken =
            futures_util::future::join_all(actions.iter().map(|a| store.insert_live_action(a)))
                .await;
        let taken: Vec<Option<String>> = taken.into_iter().map(Result::unwrap).collect();
        for (n, inserted) in taken.iter().enumerate().take(30).skip(2) {
            let expected = (n % 3 != 0).then_some("s-live");
            assert_eq!(inserted.as_deref(), expected, "action t-{n}");
        }
        // Of two actions under one uuid, one is kept, and only that one is told so.
        assert_eq!(taken[0], None);
        assert_eq!(
            [taken[1].as_deref(), taken[30].as_deref()]
                .iter()
                .filter(|kept| **kept == Some("s-live"))
                .count(),
            1,
            "{taken:?}"
        );
        assert_eq!(store.actions_page(online, 100, 0).await.unwrap().1, 20);
        assert_eq!(store.actions_page(offline, 100, 0).await.unwrap().1, 0);
        let kept = store.action(online, "t-4").await.unwrap().unwrap();
        assert_eq!(
            (
                kept.session.as_str(),
                kept.status.as_str(),
                kept.action.as_str()
            ),
            ("s-live", "pending", "Reset")
        );
        assert_eq!(kept.request, r#"{"type":"Soft"}"#);
        assert_eq!(kept.requested_by_email.as_deref(), Some("op@example.com"));
        assert_eq!(kept.created_at, "2026-11-21T10:00:00.000000Z");
        // Published at once or left to the outbox, each as it asked.
        let outbox = store
            .claim_unpublished_actions(at("2026-11-21T10:00:30Z"), 100, TIMES)
            .await
            .unwrap();
        let mut left: Vec<String> = outbox.into_iter().map(|row| row.uuid).collect();
        left.sort();
        let mut expected: Vec<String> = (0..30)
            .filter(|n| n % 3 != 0 && n % 2 != 0)
            .map(|n| format!("t-{n}"))
            .collect();
        expected.sort();
        assert_eq!(left, expected);
    }
);

store_test!(
    a_new_password_becomes_the_chargers_only_once_the_charger_takes_it,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        store
            .set_charger_security(charger, 1, Some("sha256$old$old"))
            .await
            .unwrap();
        let credential = async || -> (Option<String>, i64) {
            sqlx::query_as("SELECT password_hash, security_profile FROM chargers WHERE id = $1")
                .bind(charger)
                .fetch_one(store.db())
                .await
                .unwrap()
        };
        let pending = async || -> i64 {
            sqlx::query_scalar("SELECT COUNT(*) FROM charger_credential_changes")
                .fetch_one(store.db())
                .await
                .unwrap()
        };
        let change = |uuid: &str| NewAction {
            action: "ChangeConfiguration".into(),
            request: r#"{"key":"AuthorizationKey","value":"***"}"#.into(),
            ..new_action(charger, uuid, true)
        };
        let ended = |action: &NewAction, accepted: bool| {
            let StateChange::ActionReported(mut report) = report(action, "answered") else {
                unreachable!()
            };
            report.credential = Some(accepted);
            StateChange::ActionReported(report)
        };

        // Refused by the charger: the old password stays, and the new one is forgotten.
        store
            .insert_credential_change("rejected", charger, 2, "sha256$new$new")
            .await
            .unwrap();
        store.insert_action(&change("rejected")).await.unwrap();
        store
            .apply(&[report(&change("rejected"), "sent")])
            .await
            .unwrap();
        assert_eq!(credential().await, (Some("sha256$old$old".into()), 1));
        store
            .apply(&[ended(&change("rejected"), false)])
            .await
            .unwrap();
        assert_eq!(credential().await, (Some("sha256$old$old".into()), 1));
        assert_eq!(pending().await, 0);

        // Taken: the new password and profile are the charger's from its answer on.
        store
            .insert_credential_change("accepted", charger, 2, "sha256$new$new")
            .await
            .unwrap();
        store.insert_action(&change("accepted")).await.unwrap();
        store
            .apply(&[ended(&change("accepted"), true)])
            .await
            .unwrap();
        assert_eq!(credential().await, (Some("sha256$new$new".into()), 2));
        assert_eq!(pending().await, 0);
    }
);

store_test!(
    a_password_the_charger_took_after_its_action_was_swept_is_still_its,
    |store| {
        let charger = charger_id(&store, "CP-1").await;
        store
            .set_charger_security(charger, 1, Some("sha256$old$old"))
            .await
            .unwrap();
        let credential = async || -> Option<String> {
            sqlx::query_scalar("SELECT password_hash FROM chargers WHERE id = $1")
                .bind(charger)
                .fetch_one(store.db())
                .await
                .unwrap()
        };
        let pending = async || -> i64 {
            sqlx::query_scalar("SELECT COUNT(*) FROM charger_credential_changes")
                .fetch_one(store.db())
                .await
                .unwrap()
        };
        let change = |uuid: &str| NewAction {
            action: "ChangeConfiguration".into(),
            request: r#"{"key":"AuthorizationKey","value":"***"}"#.into(),
            ..new_action(charger, uuid, true)
        };
        // One sent and never answered in time, one never sent: both ended by the sweep.
        for (uuid, hash) in [("late", "sha256$new$new"), ("never-sent", "sha256$no$no")] {
            store
                .insert_credential_change(uuid, charger, 1, hash)
                .await
                .unwrap();
            store.insert_action(&change(uuid)).await.unwrap();
        }
        store
            .apply(&[report(&change("late"), "sent")])
            .await
            .unwrap();
        let margin = chrono::Duration::seconds(30);
        let ended = store
            .expire_overdue_actions(at("2026-11-21T10:01:31Z"), margin)
            .await
            .unwrap();
        assert_eq!(ended, 2);
        assert_eq!(
            pending().await,
            1,
            "the never-sent action's password is forgotten; the sent one's waits for its answer"
        );

        // The charger's answer arrives after the sweep: it took the password, so cms takes it.
        let StateChange::ActionReported(mut answered) = report(&change("late"), "answered") else {
            unreachable!()
        };
        answered.credential = Some(true);
        store
            .apply(&[StateChange::ActionReported(answered)])
            .await
            .unwrap();
        assert_eq!(credential().await.as_deref(), Some("sha256$new$new"));
        assert_eq!(pending().await, 0);
    }
);

store_test!(an_action_keeps_the_ocpp_version_it_was_taken_for, |store| {
    let charger = charger_id(&store, "CP-1").await;
    connect(&store, "s-live").await;
    let v201 = |uuid: &str, published: bool| NewAction {
        action: "Reset".into(),
        request: r#"{"type":"Immediate"}"#.into(),
        ocpp_version: "2.0.1".into(),
        ..new_action(charger, uuid, published)
    };
    // Taken alone, taken in a stream (written together on SQLite), by the command line.
    store
        .insert_live_action(&v201("v-alone", true))
        .await
        .unwrap();
    let stream: Vec<NewAction> = (0..8).map(|n| v201(&format!("v-{n}"), true)).collect();
    futures_util::future::join_all(stream.iter().map(|a| store.insert_live_action(a))).await;
    store.insert_action(&v201("v-cli", false)).await.unwrap();
    store
        .insert_action(&new_action(charger, "v-16", true))
        .await
        .unwrap();
    // One cms took itself (the base report after a boot), known from its report only.
    let base_report = NewAction {
        action: "GetBaseReport".into(),
        request: r#"{"requestId":1,"reportBase":"FullInventory"}"#.into(),
        ..v201("v-boot", true)
    };
    store.apply(&[report(&base_report, "sent")]).await.unwrap();

    let version = async |uuid: &str| {
        let row = store.action(charger, uuid).await.unwrap().unwrap();
        (row.action, row.ocpp_version)
    };
    let reset_201 = ("Reset".to_string(), "2.0.1".to_string());
    for uuid in ["v-alone", "v-0", "v-7", "v-cli"] {
        assert_eq!(version(uuid).await, reset_201, "{uuid}");
    }
    assert_eq!(
        version("v-boot").await,
        ("GetBaseReport".to_string(), "2.0.1".to_string())
    );
    assert_eq!(
        version("v-16").await,
        ("Reset".to_string(), "1.6".to_string())
    );
    // The outbox publishes a command-line action as taken: for 2.0.1.
    let claimed = store
        .claim_unpublished_actions(at("2026-11-21T10:00:01Z"), 10, TIMES)
        .await
        .unwrap();
    assert_eq!(
        claimed
            .iter()
            .map(|a| (a.uuid.as_str(), a.ocpp_version.as_str()))
            .collect::<Vec<_>>(),
        [("v-cli", "2.0.1")]
    );
    let (page, _) = store.actions_page(charger, 100, 0).await.unwrap();
    assert!(
        page.iter()
            .all(|a| a.ocpp_version == if a.uuid == "v-16" { "1.6" } else { "2.0.1" })
    );
});
