use super::*;
use crate::test_support::{operator_charger, store_test};
use crate::{NewCharger, Scope};

/// The (kind, subject) of every change after `seq`.
async fn logged_after(store: &Store, seq: i64) -> Vec<(String, i64)> {
    let changes = store.access_changes_since(seq, 1_000).await.unwrap();
    changes
        .into_iter()
        .map(|c| (c.kind, c.subject_id))
        .collect()
}

store_test!(a_stored_token_verifies_only_its_own_secret, |store| {
    let user = store.ensure_user("a@example.com").await.unwrap();
    let scopes = vec![Scope::METER_VALUES_READ.to_string()];
    let token = store
        .create_token(user.id, "dashboard", &scopes)
        .await
        .unwrap();
    let (key, secret) = TokenKey::parse(&token).unwrap();
    let stored = store
        .stored_token(&key, chrono::Utc::now())
        .await
        .unwrap()
        .expect("a valid token");
    assert!(stored.verifies(secret));
    assert!(!stored.verifies(&"x".repeat(40)));
    assert_eq!(stored.owner.user_id, user.id);
    assert!(stored.owner.allows(Scope::METER_VALUES_READ));
    assert!(stored.is_personal() && !stored.expired("9999"));
    assert!(TokenKey::parse("not a token").is_none());
    assert!(TokenKey::parse("x|secret").is_none());
});

store_test!(what_changes_access_is_logged_and_nothing_else, |store| {
    let user = store.ensure_user("a@example.com").await.unwrap();
    let scopes = vec![Scope::CHARGERS_READ.to_string()];
    let (token, _) = store
        .create_personal_access_token(user.id, "cli", &scopes)
        .await
        .unwrap();
    let charger = operator_charger(
        &store,
        NewCharger {
            identity: "CP-1".into(),
            ..Default::default()
        },
    )
    .await;

    // A token's use and a charger's traffic change nobody's access.
    let quiet = store.access_changes_head().await.unwrap();
    store.note_token_use(token.id, None).await;
    store
        .apply(&[crate::StateChange::Heartbeat {
            identity: "CP-1".into(),
            at: crate::now_record_time(),
        }])
        .await
        .unwrap();
    assert_eq!(logged_after(&store, quiet).await, []);

    // A revoked token is named; a charger's site, a grant to all.
    assert!(
        store
            .revoke_personal_access_token(user.id, token.id)
            .await
            .unwrap()
    );
    let other_site: i64 = sqlx::query_scalar("SELECT id FROM sites ORDER BY id LIMIT 1")
        .fetch_one(&store.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE chargers SET site_id = $1 WHERE id = $2")
        .bind(other_site)
        .bind(charger.id)
        .execute(&store.pool)
        .await
        .unwrap();
    let logged = logged_after(&store, quiet).await;
    assert_eq!(
        logged,
        [("token".to_string(), token.id), ("grants".to_string(), 0)]
    );

    // Pruned to the newest.
    store.prune_access_changes(1).await.unwrap();
    let head = store.access_changes_head().await.unwrap();
    assert_eq!(store.access_changes_tail().await.unwrap(), Some(head));
});

store_test!(
    a_users_chargers_and_sites_are_read_for_memory_in_id_order,
    |store| {
        let operator = store.ensure_user("op@example.com").await.unwrap();
        let stranger = store
            .ensure_user_in("stranger@example.com", false)
            .await
            .unwrap();
        let mut rows = Vec::new();
        for identity in ["CP-2", "CP-1", "CP-3"] {
            let new = NewCharger {
                identity: identity.into(),
                ..Default::default()
            };
            rows.push(operator_charger(&store, new).await);
        }
        let (visible, until) = store.visible_chargers(operator.id).await.unwrap();
        let ids: Vec<i64> = visible.iter().map(|c| c.id).collect();
        let mut expected: Vec<i64> = rows.iter().map(|r| r.id).collect();
        expected.sort();
        assert_eq!(ids, expected);
        assert!(visible.iter().all(|c| c.permissions.full));
        assert_eq!(until, None, "nothing expires");
        assert_eq!(store.visible_chargers(stranger.id).await.unwrap().0, []);

        // A page read by id, in the order asked, with the permissions decided in memory.
        let page = [visible[2], visible[0]];
        let read = store.chargers_by_id(&page).await.unwrap();
        assert_eq!(
            read.iter().map(|r| r.id).collect::<Vec<_>>(),
            [page[0].id, page[1].id]
        );
        assert!(read.iter().all(|r| r.permissions.full));
        assert_eq!(store.chargers_by_id(&[]).await.unwrap().len(), 0);

        // Their versions in one row; a write to a row gives it a new one.
        let ids: Vec<i64> = visible.iter().map(|c| c.id).collect();
        let before = store.charger_versions(&ids).await.unwrap();
        assert_eq!(before.len(), 3);
        assert!(
            before
                .iter()
                .all(|(id, at)| ids.contains(id) && !at.is_empty())
        );
        store
            .apply(&[crate::StateChange::Heartbeat {
                identity: rows[0].identity.clone(),
                at: "2030-01-01T00:00:00.000000Z".into(),
            }])
            .await
            .unwrap();
        let after = store.charger_versions(&ids).await.unwrap();
        let changed: Vec<i64> = after
            .iter()
            .filter(|v| !before.contains(v))
            .map(|(id, _)| *id)
            .collect();
        assert_eq!(changed, [rows[0].id]);
        assert_eq!(store.charger_versions(&[]).await.unwrap(), []);

        // A charger's connectors' version: each by number, `number=updated_at`.
        assert_eq!(store.connector_versions(rows[0].id).await.unwrap(), "");
        for (connector_id, at) in [
            (2, "2030-01-01T00:00:02.000000Z"),
            (1, "2030-01-01T00:00:03.000000Z"),
        ] {
            store
                .apply(&[crate::StateChange::Status {
                    identity: rows[0].identity.clone(),
                    connector_id,
                    status: "Available".into(),
                    error: "NoError".into(),
                    info: None,
                    vendor_id: None,
                    vendor_error_code: None,
                    at: at.into(),
                }])
                .await
                .unwrap();
        }
        assert_eq!(
            store.connector_versions(rows[0].id).await.unwrap(),
            "1=2030-01-01T00:00:03.000000Z,2=2030-01-01T00:00:02.000000Z"
        );

        let site_uuid: String = sqlx::query_scalar("SELECT uuid FROM sites WHERE id = $1")
            .bind(rows[0].site_id)
            .fetch_one(&store.pool)
            .await
            .unwrap();
        let site = store.site_access(operator.id, &site_uuid).await.unwrap();
        let site = site.expect("the operators' site");
        assert_eq!(site.id, rows[0].site_id);
        assert!(site.permissions.full);
        assert!(
            store
                .site_access(stranger.id, &site_uuid)
                .await
                .unwrap()
                .is_none()
        );
        let access = store
            .charger_access(operator.id, &rows[0].uuid)
            .await
            .unwrap();
        assert_eq!(access.map(|a| a.identity), Some(rows[0].identity.clone()));
        assert!(
            store
                .charger_access(stranger.id, &rows[0].uuid)
                .await
                .unwrap()
                .is_none()
        );
    }
);
