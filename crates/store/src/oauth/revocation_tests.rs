//! Ending OAuth access: revoking a client or a grant stops every token of it at once, and a
//! user sees and revokes only their own grants.

use super::tests::{REDIRECT, asking, begin, exchange, scopes};
use super::*;
use crate::test_support::store_test;
use crate::{Store, StoreError};
use chrono::{DateTime, Utc};

/// The code `user_id` approved for `client` and `names`, not yet exchanged.
async fn approved(
    store: &Store,
    client: &OAuthClient,
    user_id: i64,
    names: &[&str],
    now: DateTime<Utc>,
) -> String {
    let login = begin(store, &asking(client, names), now).await;
    let approval = store
        .log_in_authorization(&login, user_id, now)
        .await
        .unwrap()
        .unwrap();
    let decision = store
        .decide_authorization(&approval, true, now)
        .await
        .unwrap()
        .unwrap();
    decision.code.unwrap()
}

/// A grant of `user_id` to `client`: its tokens.
async fn granted(
    store: &Store,
    client: &OAuthClient,
    user_id: i64,
    names: &[&str],
    now: DateTime<Utc>,
) -> IssuedTokens {
    let code = approved(store, client, user_id, names, now).await;
    exchange(store, client, &code, now).await.unwrap()
}

async fn works(store: &Store, access_token: &str, now: DateTime<Utc>) -> bool {
    store
        .authenticate(access_token, now)
        .await
        .unwrap()
        .is_some()
}

store_test!(
    revoking_a_client_ends_its_tokens_codes_and_requests,
    |store| {
        let now = Utc::now();
        let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
        let (other, _) = store.create_oauth_client("Other", REDIRECT).await.unwrap();
        let user = store.ensure_user("u@example.com").await.unwrap();
        let tokens = granted(&store, &client, user.id, &["*"], now).await;
        let refreshed = store
            .refresh_access_token(&client, &tokens.refresh_token, None, now)
            .await
            .unwrap();
        let kept = granted(&store, &other, user.id, &["*"], now).await;
        let code = approved(&store, &client, user.id, &["*"], now).await;
        let login = begin(&store, &asking(&client, &["*"]), now).await;
        let listed = store.oauth_clients(now).await.unwrap();
        assert_eq!(
            listed
                .iter()
                .map(|c| (c.client.name.as_str(), c.live_grants, c.pending_requests))
                .collect::<Vec<_>>(),
            // The console's client is in every store (migration 0031).
            [("cms console", 0, 0), ("App", 1, 1), ("Other", 1, 0)]
        );
        // It cannot be revoked: the console would be locked out.
        let console = store
            .revoke_oauth_client(crate::oauth::CONSOLE_CLIENT_ID, now)
            .await;
        assert!(
            matches!(console, Err(StoreError::Conflict(_))),
            "{console:?}"
        );

        assert!(
            store
                .revoke_oauth_client(&client.client_id, now)
                .await
                .unwrap()
        );
        assert!(!works(&store, &refreshed.access_token, now).await);
        let refresh = store
            .refresh_access_token(&client, &refreshed.refresh_token, None, now)
            .await;
        assert!(
            matches!(refresh, Err(GrantError::InvalidGrant(_))),
            "{refresh:?}"
        );
        let late_exchange = exchange(&store, &client, &code, now).await;
        assert!(
            matches!(late_exchange, Err(GrantError::InvalidGrant(_))),
            "{late_exchange:?}"
        );
        assert!(
            store
                .pending_authorization(&login, now)
                .await
                .unwrap()
                .is_none()
        );
        assert_eq!(store.oauth_client(&client.client_id).await.unwrap(), None);
        assert_eq!(store.oauth_grants(user.id, 25, 0, now).await.unwrap().1, 1);
        // The other client's grant goes on.
        assert!(works(&store, &kept.access_token, now).await);
        let listed = store.oauth_clients(now).await.unwrap();
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].client.client_id, crate::oauth::CONSOLE_CLIENT_ID);
        assert_eq!(listed[1].client, other);
        assert!(
            !store
                .revoke_oauth_client(&client.client_id, now)
                .await
                .unwrap(),
            "revoked once"
        );
    }
);

store_test!(a_user_lists_and_revokes_only_their_own_grants, |store| {
    let now = Utc::now();
    let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
    let user = store.ensure_user("u@example.com").await.unwrap();
    let stranger = store.ensure_user("s@example.com").await.unwrap();
    let first = granted(&store, &client, user.id, &["chargers:read"], now).await;
    let second = granted(&store, &client, user.id, &["teams:read", "sites:read"], now).await;
    let theirs = granted(&store, &client, stranger.id, &["*"], now).await;
    // An approved code not yet exchanged is no grant yet.
    approved(&store, &client, user.id, &["*"], now).await;

    let (grants, total) = store.oauth_grants(user.id, 25, 0, now).await.unwrap();
    assert_eq!(total, 2);
    assert_eq!(
        grants
            .iter()
            .map(|g| (
                g.client_id.as_str(),
                g.client_name.as_str(),
                g.scopes.clone()
            ))
            .collect::<Vec<_>>(),
        [
            (
                client.client_id.as_str(),
                "App",
                scopes(&["teams:read", "sites:read"])
            ),
            (client.client_id.as_str(), "App", scopes(&["chargers:read"])),
        ],
        "newest first"
    );
    let (page, _) = store.oauth_grants(user.id, 1, 1, now).await.unwrap();
    assert_eq!(page, grants[1..]);
    let newest = &grants[0];
    let (their_grants, _) = store.oauth_grants(stranger.id, 25, 0, now).await.unwrap();
    let their_grant = their_grants[0].id;

    assert_eq!(
        store.oauth_grant(user.id, their_grant, now).await.unwrap(),
        None
    );
    assert!(
        !store
            .revoke_oauth_grant(user.id, their_grant, now)
            .await
            .unwrap()
    );
    assert!(works(&store, &theirs.access_token, now).await);
    assert_eq!(
        store.oauth_grant_owner(newest.id, now).await.unwrap(),
        Some(user.id)
    );

    assert!(
        store
            .revoke_oauth_grant(user.id, newest.id, now)
            .await
            .unwrap()
    );
    assert!(!works(&store, &second.access_token, now).await);
    let refresh = store
        .refresh_access_token(&client, &second.refresh_token, None, now)
        .await;
    assert!(
        matches!(refresh, Err(GrantError::InvalidGrant(_))),
        "{refresh:?}"
    );
    assert!(works(&store, &first.access_token, now).await);
    assert_eq!(store.oauth_grants(user.id, 25, 0, now).await.unwrap().1, 1);
    assert_eq!(store.oauth_grant_owner(newest.id, now).await.unwrap(), None);
    assert!(
        !store
            .revoke_oauth_grant(user.id, newest.id, now)
            .await
            .unwrap()
    );
});

store_test!(a_grant_lists_when_it_last_yielded_tokens, |store| {
    let now = Utc::now();
    let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
    let user = store.ensure_user("u@example.com").await.unwrap();
    let tokens = granted(&store, &client, user.id, &["*"], now).await;
    let later = now + chrono::Duration::minutes(5);
    store
        .refresh_access_token(&client, &tokens.refresh_token, None, later)
        .await
        .unwrap();
    let (grants, _) = store.oauth_grants(user.id, 25, 0, later).await.unwrap();
    assert_eq!(grants[0].created_at, crate::format_record_time(now));
    assert_eq!(grants[0].updated_at, crate::format_record_time(later));
    // Once its last refresh token expires, the grant is over.
    let expired = later + chrono::Duration::from_std(REFRESH_TOKEN_TTL).unwrap();
    assert_eq!(
        store.oauth_grants(user.id, 25, 0, expired).await.unwrap().1,
        0
    );
});

store_test!(a_token_of_a_revoked_grant_never_authenticates, |store| {
    let now = Utc::now();
    let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
    let user = store.ensure_user("u@example.com").await.unwrap();
    let tokens = granted(&store, &client, user.id, &["*"], now).await;
    let (grants, _) = store.oauth_grants(user.id, 25, 0, now).await.unwrap();
    store
        .revoke_oauth_grant(user.id, grants[0].id, now)
        .await
        .unwrap();
    // As if a refresh that raced the revocation had issued fresh, unrevoked tokens.
    sqlx::query("UPDATE oauth_access_tokens SET revoked = 0")
        .execute(&store.pool)
        .await
        .unwrap();
    sqlx::query("UPDATE oauth_refresh_tokens SET revoked = 0")
        .execute(&store.pool)
        .await
        .unwrap();
    assert!(!works(&store, &tokens.access_token, now).await);
    let refresh = store
        .refresh_access_token(&client, &tokens.refresh_token, None, now)
        .await;
    assert!(
        matches!(refresh, Err(GrantError::InvalidGrant(_))),
        "{refresh:?}"
    );
});
