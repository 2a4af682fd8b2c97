//! The store's side of 2.0.1 stations' lists: the base report's end, the device model's list
//! limits and switches.

use super::*;
use crate::StateChange;
use crate::actions::NewAction;
use crate::device_model::{ACTUAL, ReportedVariable, VariableName};
use crate::test_support::{charger_id, store_test};

fn variable(component: &str, variable: &str, value: &str) -> ReportedVariable {
    ReportedVariable {
        name: VariableName {
            component: component.into(),
            variable: variable.into(),
            attribute_type: ACTUAL.into(),
            ..Default::default()
        },
        value: Some(value.into()),
        mutability: "ReadOnly".into(),
        ..Default::default()
    }
}

fn report(variables: Vec<ReportedVariable>, ended_request: Option<i64>) -> StateChange {
    StateChange::DeviceModelReported {
        identity: "CP-1".into(),
        variables,
        ended_request,
        at: crate::now_record_time(),
    }
}

/// Stores the GetBaseReport cms asked for on `session` (requestId `request_id`), ended so.
async fn base_report_asked(store: &Store, cp: i64, session: &str, request_id: i64, end: &str) {
    let at = crate::now_record_time();
    let uuid = format!("gbr-{session}-{request_id}");
    store
        .insert_action(&NewAction {
            uuid: uuid.clone(),
            charger_id: cp,
            session: session.into(),
            action: "GetBaseReport".into(),
            request: format!(r#"{{"requestId":{request_id},"reportBase":"FullInventory"}}"#),
            requested_by_type: "system".into(),
            requested_by_email: None,
            timeout_ms: 30_000,
            created_at: at.clone(),
            expires_at: at,
            ocpp_version: "2.0.1".into(),
            published: true,
        })
        .await
        .unwrap();
    if end.is_empty() {
        return;
    }
    let (status, response) = match end {
        "timed_out" => ("timed_out", None),
        answer => ("answered", Some(format!(r#"{{"status":"{answer}"}}"#))),
    };
    sqlx::query("UPDATE charger_actions SET status = $1, response = $2 WHERE uuid = $3")
        .bind(status)
        .bind(response)
        .bind(&uuid)
        .execute(&store.pool)
        .await
        .unwrap();
}

store_test!(
    the_base_report_is_read_once_its_last_part_came_or_none_will,
    |store| {
        let cp = charger_id(&store, "CP-1").await;
        assert!(
            !store.base_report_read(cp, "s-1").await.unwrap(),
            "none asked"
        );
        base_report_asked(&store, cp, "s-1", 7, "").await;
        assert!(!store.base_report_read(cp, "s-1").await.unwrap(), "pending");
        base_report_asked(&store, cp, "s-1", 8, "Accepted").await;
        let first = vec![variable("LocalAuthListCtrlr", "ItemsPerMessage", "2")];
        store.apply(&[report(first, None)]).await.unwrap();
        assert!(
            !store.base_report_read(cp, "s-1").await.unwrap(),
            "a part with tbc: more to come"
        );
        // Another report's end (an operator's GetReport) is not the base report's.
        store.apply(&[report(vec![], Some(99))]).await.unwrap();
        assert!(!store.base_report_read(cp, "s-1").await.unwrap());
        store.apply(&[report(vec![], Some(8))]).await.unwrap();
        assert!(store.base_report_read(cp, "s-1").await.unwrap());
        assert!(
            !store.base_report_read(cp, "s-2").await.unwrap(),
            "another session's read is not this one's"
        );
        base_report_asked(&store, cp, "s-2", 9, "NotSupported").await;
        assert!(
            store.base_report_read(cp, "s-2").await.unwrap(),
            "none comes"
        );
        base_report_asked(&store, cp, "s-3", 10, "timed_out").await;
        assert!(
            store.base_report_read(cp, "s-3").await.unwrap(),
            "gone on without"
        );
    }
);

store_test!(
    a_stations_list_limits_and_switches_come_from_its_device_model,
    |store| {
        let cp = charger_id(&store, "CP-1").await;
        assert_eq!(
            store.station_list(cp).await.unwrap(),
            StationList::default(),
            "nothing reported: no limits, a list kept, no cache known"
        );
        let mut entries = variable("LocalAuthListCtrlr", "Entries", "0");
        entries.max_limit = Some(25.0);
        let mut per_evse = variable("LocalAuthListCtrlr", "ItemsPerMessage", "1");
        per_evse.name.evse_id = Some(1);
        let reported = vec![
            variable("LocalAuthListCtrlr", "Enabled", "true"),
            variable("LocalAuthListCtrlr", "Available", "true"),
            variable("LocalAuthListCtrlr", "ItemsPerMessage", "3"),
            variable("LocalAuthListCtrlr", "BytesPerMessage", "4096"),
            entries,
            per_evse,
            variable("AuthCacheCtrlr", "Enabled", "true"),
        ];
        store.apply(&[report(reported, Some(1))]).await.unwrap();
        let list = store.station_list(cp).await.unwrap();
        assert_eq!(
            list,
            StationList {
                limits: ListLimits {
                    max_entries: Some(25),
                    max_send: Some(3),
                    max_bytes: Some(4096),
                },
                keeps_none: false,
                cache_enabled: true,
            }
        );
        let off = vec![
            variable("LocalAuthListCtrlr", "Enabled", "false"),
            variable("AuthCacheCtrlr", "Enabled", "false"),
        ];
        store.apply(&[report(off, Some(2))]).await.unwrap();
        let list = store.station_list(cp).await.unwrap();
        assert!(list.keeps_none && !list.cache_enabled, "{list:?}");
        let unavailable = vec![
            variable("LocalAuthListCtrlr", "Enabled", "true"),
            variable("LocalAuthListCtrlr", "Available", "false"),
        ];
        store.apply(&[report(unavailable, Some(3))]).await.unwrap();
        assert!(store.station_list(cp).await.unwrap().keeps_none);

        // Noted for the session: nothing more is sent on it.
        let at = crate::now_record_time();
        store.local_list_kept_by_none(cp, "s-1", &at).await.unwrap();
        let held = store.local_list_charger(cp).await.unwrap().unwrap().held;
        assert_eq!(held.unsupported_session.as_deref(), Some("s-1"));
    }
);

store_test!(a_cache_clear_is_due_until_its_call_ends, |store| {
    let cp = charger_id(&store, "CP-1").await;
    assert!(!store.authorization_cache_enabled(cp).await.unwrap());
    sqlx::query(
        "INSERT INTO charger_settings (charger_id, key, value, readonly, updated_at)
         VALUES ($1, 'AuthorizationCacheEnabled', 'True', 0, 't')",
    )
    .bind(cp)
    .execute(&store.pool)
    .await
    .unwrap();
    assert!(
        store.authorization_cache_enabled(cp).await.unwrap(),
        "1.6's key"
    );

    let at = crate::now_record_time();
    let check = ListCall {
        action_uuid: "u-1".into(),
        session: "s-1".into(),
        kind: ListCallKind::Check {
            expected_version: 0,
        },
    };
    assert!(
        store
            .claim_local_list_call(cp, 0, &check, &at)
            .await
            .unwrap()
    );
    store.local_list_clear_cache(cp, &at).await.unwrap();
    let held = store.local_list_charger(cp).await.unwrap().unwrap().held;
    assert!(held.clear_cache);
    let settled = CallOutcome::Retry { retry_after: None };
    assert!(
        store
            .settle_local_list_call(cp, "u-1", &settled, &at)
            .await
            .unwrap()
    );
    let held = store.local_list_charger(cp).await.unwrap().unwrap().held;
    assert!(held.clear_cache, "still due after another call");

    let clear = ListCall {
        action_uuid: "u-2".into(),
        session: "s-1".into(),
        kind: ListCallKind::ClearCache,
    };
    assert!(
        store
            .claim_local_list_call(cp, held.revision, &clear, &at)
            .await
            .unwrap()
    );
    let ended = store.ended_local_list_calls("9999").await.unwrap();
    assert_eq!(ended[0].kind, "clear_cache");
    let cleared = CallOutcome::CacheCleared;
    assert!(
        store
            .settle_local_list_call(cp, "u-2", &cleared, &at)
            .await
            .unwrap()
    );
    let held = store.local_list_charger(cp).await.unwrap().unwrap().held;
    assert!(
        !held.clear_cache && held.pending_action.is_none(),
        "{held:?}"
    );
});
