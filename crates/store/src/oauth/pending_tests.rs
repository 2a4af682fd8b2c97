//! What a stranger can make the store hold: pending authorization requests are bounded per
//! client address and in all, and a request ends after a few wrong passwords.

use super::tests::{ADDRESS, REDIRECT, after, asking, begin};
use super::*;
use crate::Store;
use crate::test_support::store_test;
use chrono::Utc;

store_test!(one_address_keeps_only_so_many_requests_pending, |store| {
    let now = Utc::now();
    let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
    let limits = PendingLimits {
        per_address: 3,
        total: 100,
    };
    let request = asking(&client, &["chargers:read"]);
    for _ in 0..3 {
        store
            .begin_authorization(&request, limits, now)
            .await
            .unwrap();
    }
    let refused = store.begin_authorization(&request, limits, now).await;
    assert!(
        matches!(refused, Err(BeginError::TooManyFromAddress(3))),
        "{refused:?}"
    );
    // Another address is not held back by this one.
    let elsewhere = AuthorizationRequest {
        client_address: "198.51.100.7".into(),
        ..request.clone()
    };
    store
        .begin_authorization(&elsewhere, limits, now)
        .await
        .unwrap();
    // Once the first ones expire, the address may open requests again.
    let later = after(now, AUTHORIZATION_REQUEST_TTL, 1);
    store
        .begin_authorization(&request, limits, later)
        .await
        .unwrap();
});

store_test!(
    the_store_keeps_only_so_many_requests_pending_in_all,
    |store| {
        let now = Utc::now();
        let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
        let limits = PendingLimits {
            per_address: 3,
            total: 4,
        };
        for n in 0..4 {
            let request = AuthorizationRequest {
                client_address: format!("192.0.2.{n}"),
                ..asking(&client, &["chargers:read"])
            };
            store
                .begin_authorization(&request, limits, now)
                .await
                .unwrap();
        }
        let request = AuthorizationRequest {
            client_address: "192.0.2.99".into(),
            ..asking(&client, &["chargers:read"])
        };
        let refused = store.begin_authorization(&request, limits, now).await;
        assert!(
            matches!(refused, Err(BeginError::TooManyPending(4))),
            "{refused:?}"
        );
    }
);

store_test!(
    concurrent_requests_from_one_address_never_pass_its_limit,
    |store| {
        let now = Utc::now();
        let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
        let limits = PendingLimits {
            per_address: 5,
            total: 100,
        };
        let request = asking(&client, &["chargers:read"]);
        let attempts: Vec<_> = (0..20)
            .map(|_| {
                let store = store.clone();
                let request = request.clone();
                tokio::spawn(async move { store.begin_authorization(&request, limits, now).await })
            })
            .collect();
        let mut kept = 0;
        for attempt in attempts {
            match attempt.await.unwrap() {
                Ok(_) => kept += 1,
                Err(BeginError::TooManyFromAddress(_)) => {}
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(kept, 5);
    }
);

store_test!(the_fifth_wrong_password_ends_the_request, |store| {
    let now = Utc::now();
    let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
    let user = store.ensure_user("u@example.com").await.unwrap();
    let login = begin(&store, &asking(&client, &["chargers:read"]), now).await;
    for _ in 1..MAX_FAILED_LOGINS_PER_REQUEST {
        assert!(!store.record_failed_login(&login, now).await.unwrap());
    }
    assert!(
        store
            .pending_authorization(&login, now)
            .await
            .unwrap()
            .is_some()
    );
    assert!(store.record_failed_login(&login, now).await.unwrap());
    assert!(
        store
            .pending_authorization(&login, now)
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .log_in_authorization(&login, user.id, now)
            .await
            .unwrap()
            .is_none(),
        "the right password comes too late"
    );
    // It no longer counts against its address either.
    assert_eq!(pending_from(&store, ADDRESS, now).await, 0);
});

/// How many live requests `address` holds.
async fn pending_from(store: &Store, address: &str, now: chrono::DateTime<Utc>) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM oauth_authorization_requests
         WHERE client_address = $1 AND expires_at > $2",
    )
    .bind(address)
    .bind(crate::format_record_time(now))
    .fetch_one(&store.pool)
    .await
    .unwrap()
}
