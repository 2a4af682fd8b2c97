use super::fixtures::*;
use super::*;
use crate::actions::NewAction;
use crate::test_support::{charger_id, store_test};

fn entry(id_tag: &str, status: &str) -> ListEntry {
    ListEntry {
        id_tag: id_tag.into(),
        key: id_tag.to_ascii_uppercase(),
        status: status.into(),
        expiry_date: None,
        parent_id_tag: None,
    }
}

fn tags_of(list: &[ListEntry]) -> Vec<(&str, &str)> {
    list.iter()
        .map(|e| (e.id_tag.as_str(), e.status.as_str()))
        .collect()
}

/// Another team (a user's personal one).
async fn team(store: &Store, email: &str) -> i64 {
    store.ensure_user(email).await.unwrap().personal_team_id
}

store_test!(
    the_tags_of_the_owner_and_of_teams_with_access_apply,
    |store| {
        let cp1 = charger_id(&store, "CP-1").await;
        let cp2 = charger_id(&store, "CP-2").await;
        let (_, site, owner) = charger_site(&store, "CP-1").await.unwrap();
        let all = team(&store, "all@example.com").await;
        let listed = team(&store, "listed@example.com").await;
        let outsider = team(&store, "outsider@example.com").await;
        put_id_tag(&store, owner, "owner-1", "Accepted", None, None)
            .await
            .unwrap();
        put_id_tag(&store, all, "all-1", "Blocked", None, Some("P"))
            .await
            .unwrap();
        put_id_tag(&store, listed, "listed-1", "Accepted", None, None)
            .await
            .unwrap();
        put_id_tag(&store, outsider, "outsider-1", "Accepted", None, None)
            .await
            .unwrap();
        grant_site_access(&store, site, all, true).await.unwrap();
        let access = grant_site_access(&store, site, listed, false)
            .await
            .unwrap();
        grant_charger(&store, access, cp1).await.unwrap();

        let now = chrono::Utc::now();
        let at_cp1 = store.desired_local_list(cp1, now).await.unwrap();
        assert_eq!(
            tags_of(&at_cp1),
            [
                ("all-1", "Blocked"),
                ("listed-1", "Accepted"),
                ("owner-1", "Accepted")
            ]
        );
        assert_eq!(at_cp1[0].parent_id_tag.as_deref(), Some("P"));
        let at_cp2 = store.desired_local_list(cp2, now).await.unwrap();
        assert_eq!(
            tags_of(&at_cp2),
            [("all-1", "Blocked"), ("owner-1", "Accepted")],
            "a team whose access lists other chargers has no tags here"
        );
    }
);

store_test!(
    a_shared_key_goes_to_an_accepted_entry_else_the_owners,
    |store| {
        let cp = charger_id(&store, "CP-1").await;
        let (_, site, owner) = charger_site(&store, "CP-1").await.unwrap();
        let a = team(&store, "a@example.com").await;
        let b = team(&store, "b@example.com").await;
        let (low, high) = (a.min(b), a.max(b));
        grant_site_access(&store, site, a, true).await.unwrap();
        grant_site_access(&store, site, b, true).await.unwrap();
        // Blocked at the owner, Accepted at both others: the lowest team id's Accepted wins.
        put_id_tag(&store, owner, "shared", "Blocked", None, None)
            .await
            .unwrap();
        put_id_tag(&store, high, "SHARED", "Accepted", None, Some("high"))
            .await
            .unwrap();
        put_id_tag(&store, low, "Shared", "Accepted", None, Some("low"))
            .await
            .unwrap();
        // Expired at the lowest team, Accepted at the other: the unexpired one wins.
        put_id_tag(
            &store,
            low,
            "dated",
            "Accepted",
            Some("2020-01-01T00:00:00Z"),
            None,
        )
        .await
        .unwrap();
        put_id_tag(
            &store,
            high,
            "DATED",
            "Accepted",
            Some("2999-01-01T00:00:00Z"),
            None,
        )
        .await
        .unwrap();
        // Nobody Accepted: the owner's entry.
        put_id_tag(&store, low, "refused", "Invalid", None, None)
            .await
            .unwrap();
        put_id_tag(&store, owner, "REFUSED", "Blocked", None, None)
            .await
            .unwrap();
        // Nobody Accepted, the owner without it: the lowest team id's.
        put_id_tag(&store, high, "others", "Expired", None, None)
            .await
            .unwrap();
        put_id_tag(&store, low, "OTHERS", "Invalid", None, None)
            .await
            .unwrap();

        let list = store
            .desired_local_list(cp, chrono::Utc::now())
            .await
            .unwrap();
        let by_key = |key: &str| list.iter().find(|e| e.key == key).unwrap().clone();
        assert_eq!(list.len(), 4);
        assert_eq!(by_key("SHARED").parent_id_tag.as_deref(), Some("low"));
        assert_eq!(by_key("DATED").id_tag, "DATED");
        assert_eq!(
            (
                by_key("REFUSED").id_tag.as_str(),
                by_key("REFUSED").status.as_str()
            ),
            ("REFUSED", "Blocked")
        );
        assert_eq!(by_key("OTHERS").id_tag, "OTHERS");
    }
);

store_test!(a_call_is_claimed_once_and_settled_once, |store| {
    let cp = charger_id(&store, "CP-1").await;
    let held = store.local_list_charger(cp).await.unwrap().unwrap().held;
    assert_eq!((held.version, held.needs_full, held.revision), (0, true, 0));
    let update = next_update(&[], 0, true, &[entry("a", "Accepted")], None).unwrap();
    let call = ListCall {
        action_uuid: "u-1".into(),
        session: "s-1".into(),
        kind: ListCallKind::Update(update),
    };
    let at = crate::now_record_time();
    assert!(
        store
            .claim_local_list_call(cp, 0, &call, &at)
            .await
            .unwrap()
    );
    let again = ListCall {
        action_uuid: "u-2".into(),
        ..call.clone()
    };
    assert!(
        !store
            .claim_local_list_call(cp, 0, &again, &at)
            .await
            .unwrap(),
        "a second replica's claim on the same state fails"
    );
    assert!(store.ended_local_list_calls("0").await.unwrap().is_empty());

    // The action answered: the call ended.
    store
        .insert_action(&NewAction {
            uuid: "u-1".into(),
            charger_id: cp,
            session: "s-1".into(),
            action: "SendLocalList".into(),
            request: "{}".into(),
            requested_by_type: "system".into(),
            requested_by_email: None,
            timeout_ms: 30_000,
            created_at: at.clone(),
            expires_at: at.clone(),
            ocpp_version: "1.6".into(),
            published: true,
        })
        .await
        .unwrap();
    sqlx::query("UPDATE charger_actions SET status = 'answered', response = $1 WHERE uuid = 'u-1'")
        .bind(r#"{"status":"Accepted"}"#)
        .execute(&store.pool)
        .await
        .unwrap();
    let ended = store.ended_local_list_calls("0").await.unwrap();
    assert_eq!(ended.len(), 1);
    assert_eq!(
        (ended[0].kind.as_str(), ended[0].status.as_deref()),
        ("full", Some("answered"))
    );
    let outcome = CallOutcome::Accepted;
    assert!(
        store
            .settle_local_list_call(cp, "u-1", &outcome, &at)
            .await
            .unwrap()
    );
    assert!(
        !store
            .settle_local_list_call(cp, "u-1", &outcome, &at)
            .await
            .unwrap(),
        "settled once"
    );
    let held = store.local_list_charger(cp).await.unwrap().unwrap().held;
    assert_eq!((held.version, held.needs_full), (1, false));
    assert_eq!(tags_of(&held.entries), [("a", "Accepted")]);
    assert_eq!(held.pending_action, None);
});

store_test!(a_claim_never_taken_ends_once_stale, |store| {
    let cp = charger_id(&store, "CP-1").await;
    let call = ListCall {
        action_uuid: "u-1".into(),
        session: "s-1".into(),
        kind: ListCallKind::Check {
            expected_version: 0,
        },
    };
    let at = crate::now_record_time();
    assert!(
        store
            .claim_local_list_call(cp, 0, &call, &at)
            .await
            .unwrap()
    );
    assert!(store.ended_local_list_calls(&at).await.unwrap().is_empty());
    let ended = store.ended_local_list_calls("9999").await.unwrap();
    assert_eq!((ended.len(), ended[0].status.as_deref()), (1, None));
    let retry = CallOutcome::Retry { retry_after: None };
    assert!(
        store
            .settle_local_list_call(cp, "u-1", &retry, &at)
            .await
            .unwrap()
    );
    let held = store.local_list_charger(cp).await.unwrap().unwrap().held;
    assert_eq!((held.checked_session, held.needs_full), (None, true));
});

store_test!(
    tag_changes_and_site_changes_mark_the_chargers_that_keep_lists,
    |store| {
        let cp = charger_id(&store, "CP-1").await;
        let (_, site, owner) = charger_site(&store, "CP-1").await.unwrap();
        let start = store.local_list_cursors().await.unwrap();
        put_id_tag(&store, owner, "a", "Accepted", None, None)
            .await
            .unwrap();
        let (marked, cursors) = store.local_list_changes(start).await.unwrap();
        assert!(marked.is_empty(), "the site keeps no list: {marked:?}");
        set_site_authorization(&store, site, "id_tags", true)
            .await
            .unwrap();
        let (marked, cursors) = store.local_list_changes(cursors).await.unwrap();
        assert_eq!(marked, [cp], "turning the list on");
        put_id_tag(&store, owner, "b", "Accepted", None, None)
            .await
            .unwrap();
        let (marked, cursors) = store.local_list_changes(cursors).await.unwrap();
        assert_eq!(marked, [cp], "a tag of the owner");
        let other = team(&store, "other@example.com").await;
        put_id_tag(&store, other, "c", "Accepted", None, None)
            .await
            .unwrap();
        let (marked, cursors) = store.local_list_changes(cursors).await.unwrap();
        assert!(marked.is_empty(), "a team without access: {marked:?}");
        grant_site_access(&store, site, other, true).await.unwrap();
        let (marked, cursors) = store.local_list_changes(cursors).await.unwrap();
        assert_eq!(marked, [cp], "access granted");
        remove_id_tag(&store, other, "C").await.unwrap();
        let (marked, _) = store.local_list_changes(cursors).await.unwrap();
        assert_eq!(marked, [cp], "a tag of a team with access");
        assert!(
            store.local_lists_unchecked().await.unwrap().is_empty(),
            "offline"
        );
        sqlx::query("UPDATE chargers SET connection_status = 'online', session = 's-1'")
            .execute(&store.pool)
            .await
            .unwrap();
        assert_eq!(store.local_lists_unchecked().await.unwrap(), [cp]);
        assert_eq!(store.local_lists_online().await.unwrap(), [cp]);
    }
);

#[test]
fn a_differential_update_sends_removals_first_then_changes_in_parts() {
    let held = vec![
        entry("a", "Accepted"),
        entry("b", "Accepted"),
        entry("c", "Accepted"),
    ];
    let desired = vec![
        entry("b", "Blocked"),
        entry("d", "Accepted"),
        entry("e", "Accepted"),
    ];
    let changes = diff(&held, &desired);
    let shown: Vec<String> = changes
        .iter()
        .map(|c| match c {
            ListChange::Upsert(e) => format!("+{}:{}", e.id_tag, e.status),
            ListChange::Remove { id_tag, .. } => format!("-{id_tag}"),
        })
        .collect();
    assert_eq!(
        shown,
        ["-a", "-c", "+b:Blocked", "+d:Accepted", "+e:Accepted"]
    );
    let first = next_update(&held, 4, false, &desired, Some(3)).unwrap();
    assert_eq!(
        (first.update_type, first.version, first.changes.len()),
        (UpdateType::Differential, 5, 3)
    );
    assert_eq!(tags_of(&first.result), [("b", "Blocked")]);
    let second = next_update(&first.result, 5, false, &desired, Some(3)).unwrap();
    assert_eq!(second.version, 6);
    assert_eq!(second.result, desired);
    assert_eq!(next_update(&desired, 6, false, &desired, Some(3)), None);
}

#[test]
fn a_full_update_sends_the_first_part_and_replaces_the_list() {
    let desired: Vec<ListEntry> = ["a", "b", "c"]
        .iter()
        .map(|t| entry(t, "Accepted"))
        .collect();
    let full = next_update(&[entry("z", "Accepted")], 7, true, &desired, Some(2)).unwrap();
    assert_eq!((full.update_type, full.version), (UpdateType::Full, 8));
    assert_eq!(full.result, desired[..2]);
    let rest = next_update(&full.result, 8, false, &desired, Some(2)).unwrap();
    assert_eq!(rest.changes, [ListChange::Upsert(desired[2].clone())]);
    let empty = next_update(&desired, 9, true, &[], None).unwrap();
    assert!(empty.changes.is_empty(), "a full update may empty the list");
}

#[test]
fn a_list_too_long_keeps_accepted_entries_first() {
    let desired = vec![
        entry("a", "Blocked"),
        entry("b", "Accepted"),
        entry("c", "Invalid"),
        entry("d", "Accepted"),
    ];
    let (kept, cut) = fit(desired.clone(), Some(3));
    assert!(cut);
    assert_eq!(
        tags_of(&kept),
        [("a", "Blocked"), ("b", "Accepted"), ("d", "Accepted")]
    );
    assert_eq!(fit(desired.clone(), Some(4)), (desired.clone(), false));
    assert_eq!(fit(desired.clone(), None), (desired, false));
}
