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
