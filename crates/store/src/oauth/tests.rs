//! The authorization code flow in the store, step by step, on both backends; the helpers here
//! serve the sibling test files too.

use super::*;
use crate::Store;
use crate::test_support::store_test;
use chrono::{DateTime, Utc};

/// RFC 7636 Appendix B: the verifier, and its SHA-256 (the S256 challenge, decoded).
pub(super) const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
const CHALLENGE: [u8; 32] = [
    19, 211, 30, 150, 26, 26, 216, 236, 47, 22, 177, 12, 76, 152, 46, 8, 118, 168, 120, 173, 109,
    241, 68, 86, 110, 225, 137, 74, 203, 112, 249, 195,
];
pub(super) const REDIRECT: &str = "https://app.example.com/callback";
const PKCE: CodeChallenge = CodeChallenge::S256(CHALLENGE);
pub(super) const ADDRESS: &str = "192.0.2.1";

pub(super) fn after(
    now: DateTime<Utc>,
    ttl: std::time::Duration,
    extra_secs: i64,
) -> DateTime<Utc> {
    now + chrono::Duration::from_std(ttl).unwrap() + chrono::Duration::seconds(extra_secs)
}

pub(super) fn scopes(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// What `client` asks for: `scopes`, with [`PKCE`], from [`ADDRESS`].
pub(super) fn asking(client: &OAuthClient, names: &[&str]) -> AuthorizationRequest {
    AuthorizationRequest {
        client: client.id,
        redirect_uri: REDIRECT.into(),
        redirect_uri_given: true,
        scopes: scopes(names),
        state: Some("xyz".into()),
        code_challenge: PKCE,
        client_address: ADDRESS.into(),
    }
}

/// Keeps `request` under the default limits.
pub(super) async fn begin(
    store: &Store,
    request: &AuthorizationRequest,
    now: DateTime<Utc>,
) -> String {
    store
        .begin_authorization(request, PendingLimits::DEFAULT, now)
        .await
        .unwrap()
}

/// Exchanges `code` with the right redirect URI and verifier.
pub(super) async fn exchange(
    store: &Store,
    client: &OAuthClient,
    code: &str,
    now: DateTime<Utc>,
) -> Result<IssuedTokens, GrantError> {
    store
        .exchange_authorization_code(client, code, Some(REDIRECT), Some(VERIFIER), now)
        .await
}

/// A client, a user, and a code the user approved for `chargers:read teams:read`.
pub(super) async fn approved_code(store: &Store, now: DateTime<Utc>) -> (OAuthClient, i64, String) {
    let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
    let user = store.ensure_user("u@example.com").await.unwrap();
    let request = asking(&client, &["chargers:read", "teams:read"]);
    let login = begin(store, &request, now).await;
    let approval = store
        .log_in_authorization(&login, user.id, now)
        .await
        .unwrap()
        .unwrap();
    let decision = store
        .decide_authorization(&approval, true, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(decision.redirect_uri, REDIRECT);
    assert_eq!(decision.state.as_deref(), Some("xyz"));
    (client, user.id, decision.code.unwrap())
}

store_test!(clients_authenticate_with_their_secret_only, |store| {
    let (client, secret) = store.create_oauth_client("App", REDIRECT).await.unwrap();
    assert_eq!(secret.len(), 40);
    let found = store
        .authenticate_oauth_client(&client.client_id, &secret)
        .await
        .unwrap();
    assert_eq!(found, Some(client.clone()));
    let wrong = store
        .authenticate_oauth_client(&client.client_id, "nope")
        .await
        .unwrap();
    assert_eq!(wrong, None);
    assert_eq!(store.oauth_client("unknown").await.unwrap(), None);
    assert!(
        store
            .create_oauth_client("Bad", "javascript:alert(1)")
            .await
            .is_err()
    );
});

store_test!(a_code_is_exchanged_once_for_tokens_of_its_scopes, |store| {
    let now = Utc::now();
    let (client, user_id, code) = approved_code(&store, now).await;
    let (other, _) = store.create_oauth_client("Other", REDIRECT).await.unwrap();
    let stolen = exchange(&store, &other, &code, now).await;
    assert!(
        matches!(stolen, Err(GrantError::InvalidGrant(_))),
        "{stolen:?}"
    );
    let elsewhere = store
        .exchange_authorization_code(
            &client,
            &code,
            Some("https://evil.example/cb"),
            Some(VERIFIER),
            now,
        )
        .await;
    assert!(
        matches!(elsewhere, Err(GrantError::InvalidGrant(_))),
        "{elsewhere:?}"
    );

    let issued = exchange(&store, &client, &code, now).await.unwrap();
    assert_eq!(issued.expires_in, 3600);
    assert_eq!(issued.scopes, ["chargers:read", "teams:read"]);
    assert!(!issued.access_token.contains('|'));
    let owner = store
        .authenticate(&issued.access_token, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner.user_id, user_id);
    assert!(owner.allows("teams:read") && !owner.allows("teams:write"));
    // A refresh token is not an access token.
    assert!(
        store
            .authenticate(&issued.refresh_token, now)
            .await
            .unwrap()
            .is_none()
    );

    // Replayed: refused, and what the code yielded is revoked.
    let replay = exchange(&store, &client, &code, now).await;
    assert!(
        matches!(replay, Err(GrantError::InvalidGrant(_))),
        "{replay:?}"
    );
    assert!(
        store
            .authenticate(&issued.access_token, now)
            .await
            .unwrap()
            .is_none()
    );
});

store_test!(pkce_needs_the_verifier_of_the_challenge, |store| {
    let now = Utc::now();
    let (client, _, code) = approved_code(&store, now).await;
    let exchange = |verifier: Option<&'static str>| {
        store.exchange_authorization_code(&client, &code, Some(REDIRECT), verifier, now)
    };
    assert!(matches!(
        exchange(None).await,
        Err(GrantError::InvalidRequest(_))
    ));
    let wrong = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXx";
    assert!(matches!(
        exchange(Some(wrong)).await,
        Err(GrantError::InvalidGrant(_))
    ));
    assert!(matches!(
        exchange(Some("short")).await,
        Err(GrantError::InvalidGrant(_))
    ));
    assert!(exchange(Some(VERIFIER)).await.is_ok());
});

store_test!(
    a_code_kept_from_before_pkce_was_required_is_refused,
    |store| {
        let now = Utc::now();
        let (client, _, code) = approved_code(&store, now).await;
        sqlx::query("UPDATE oauth_auth_codes SET code_challenge = NULL")
            .execute(&store.pool)
            .await
            .unwrap();
        let legacy = exchange(&store, &client, &code, now).await;
        assert!(
            matches!(legacy, Err(GrantError::InvalidGrant(_))),
            "{legacy:?}"
        );
    }
);

store_test!(codes_and_tokens_expire, |store| {
    let now = Utc::now();
    let (client, _, code) = approved_code(&store, now).await;
    let late = after(now, AUTH_CODE_TTL, 1);
    let expired = exchange(&store, &client, &code, late).await;
    assert!(
        matches!(expired, Err(GrantError::InvalidGrant(_))),
        "{expired:?}"
    );

    let (client, _, code) = approved_code(&store, now).await;
    let issued = exchange(&store, &client, &code, now).await.unwrap();
    let token = &issued.access_token;
    let just_before = after(now, ACCESS_TOKEN_TTL, -1);
    assert!(
        store
            .authenticate(token, just_before)
            .await
            .unwrap()
            .is_some()
    );
    let just_after = after(now, ACCESS_TOKEN_TTL, 1);
    assert!(
        store
            .authenticate(token, just_after)
            .await
            .unwrap()
            .is_none()
    );

    let too_late = after(now, REFRESH_TOKEN_TTL, 1);
    let refreshed = store
        .refresh_access_token(&client, &issued.refresh_token, None, too_late)
        .await;
    assert!(
        matches!(refreshed, Err(GrantError::InvalidGrant(_))),
        "{refreshed:?}"
    );
    // An expired access token is refreshed within the refresh token's life.
    let renewed = store
        .refresh_access_token(&client, &issued.refresh_token, None, just_after)
        .await
        .unwrap();
    let owner = store
        .authenticate(&renewed.access_token, just_after)
        .await
        .unwrap();
    assert!(owner.is_some());
});

store_test!(refreshing_rotates_both_tokens, |store| {
    let now = Utc::now();
    let (client, user_id, code) = approved_code(&store, now).await;
    let first = exchange(&store, &client, &code, now).await.unwrap();
    let narrowed = scopes(&["teams:read"]);
    let second = store
        .refresh_access_token(&client, &first.refresh_token, Some(&narrowed), now)
        .await
        .unwrap();
    assert_eq!(second.scopes, narrowed);
    assert_ne!(second.refresh_token, first.refresh_token);
    let owner = store
        .authenticate(&second.access_token, now)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(owner.user_id, user_id);
    assert!(!owner.allows("chargers:read"));
    // The old access token stopped with its refresh token.
    assert!(
        store
            .authenticate(&first.access_token, now)
            .await
            .unwrap()
            .is_none()
    );
    // Asking for more than was granted is refused, and changes nothing.
    let wider = scopes(&["teams:read", "sites:write"]);
    let refused = store
        .refresh_access_token(&client, &second.refresh_token, Some(&wider), now)
        .await;
    assert!(
        matches!(refused, Err(GrantError::InvalidScope(_))),
        "{refused:?}"
    );
    // The old refresh token replayed: refused, and the grant's live tokens are revoked.
    let replay = store
        .refresh_access_token(&client, &first.refresh_token, None, now)
        .await;
    assert!(
        matches!(replay, Err(GrantError::InvalidGrant(_))),
        "{replay:?}"
    );
    assert!(
        store
            .authenticate(&second.access_token, now)
            .await
            .unwrap()
            .is_none()
    );
    let after_replay = store
        .refresh_access_token(&client, &second.refresh_token, None, now)
        .await;
    assert!(matches!(after_replay, Err(GrantError::InvalidGrant(_))));
});

store_test!(
    an_authorization_request_is_logged_in_to_then_decided_once,
    |store| {
        let now = Utc::now();
        let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
        let user = store.ensure_user("u@example.com").await.unwrap();
        let request = AuthorizationRequest {
            redirect_uri_given: false,
            state: None,
            ..asking(&client, &["*"])
        };
        let login = begin(&store, &request, now).await;
        let pending = store
            .pending_authorization(&login, now)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            pending,
            PendingAuthorization {
                client_name: "App".into(),
                scopes: scopes(&["*"]),
                logged_in: false
            }
        );
        // Not logged in yet: no decision.
        assert!(
            store
                .decide_authorization(&login, true, now)
                .await
                .unwrap()
                .is_none()
        );
        let approval = store
            .log_in_authorization(&login, user.id, now)
            .await
            .unwrap()
            .unwrap();
        // The login page's secret is spent; the approval page's cannot log in again.
        assert!(
            store
                .pending_authorization(&login, now)
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            store
                .log_in_authorization(&approval, user.id, now)
                .await
                .unwrap()
                .is_none()
        );
        let denied = store
            .decide_authorization(&approval, false, now)
            .await
            .unwrap()
            .unwrap();
        assert_eq!((denied.code, denied.state), (None, None));
        assert!(
            store
                .decide_authorization(&approval, true, now)
                .await
                .unwrap()
                .is_none()
        );

        // Expired before the user logs in.
        let login = begin(&store, &request, now).await;
        let late = after(now, AUTHORIZATION_REQUEST_TTL, 1);
        assert!(
            store
                .log_in_authorization(&login, user.id, late)
                .await
                .unwrap()
                .is_none()
        );
        assert!(
            store
                .pending_authorization("not-a-secret", now)
                .await
                .unwrap()
                .is_none()
        );
    }
);

store_test!(
    a_code_from_a_request_without_redirect_uri_needs_none,
    |store| {
        let now = Utc::now();
        let (client, _) = store.create_oauth_client("App", REDIRECT).await.unwrap();
        let user = store.ensure_user("u@example.com").await.unwrap();
        let request = AuthorizationRequest {
            redirect_uri_given: false,
            ..asking(&client, &["chargers:read"])
        };
        let mut codes = Vec::new();
        for _ in 0..3 {
            let login = begin(&store, &request, now).await;
            let approval = store
                .log_in_authorization(&login, user.id, now)
                .await
                .unwrap()
                .unwrap();
            let decision = store
                .decide_authorization(&approval, true, now)
                .await
                .unwrap()
                .unwrap();
            codes.push(decision.code.unwrap());
        }
        let exchange = |code: String, uri: Option<&'static str>| {
            let client = client.clone();
            let store = store.clone();
            async move {
                store
                    .exchange_authorization_code(&client, &code, uri, Some(VERIFIER), now)
                    .await
            }
        };
        assert!(exchange(codes[0].clone(), None).await.is_ok());
        assert!(exchange(codes[1].clone(), Some(REDIRECT)).await.is_ok());
        let wrong = exchange(codes[2].clone(), Some("https://app.example.com/other")).await;
        assert!(matches!(wrong, Err(GrantError::InvalidGrant(_))));
    }
);

store_test!(users_log_in_with_their_password, |store| {
    let user = store.ensure_user("u@example.com").await.unwrap();
    assert!(
        store
            .user_with_password("u@example.com", "")
            .await
            .unwrap()
            .is_none()
    );
    store
        .set_user_login(user.id, Some("Ursula"), "correct horse")
        .await
        .unwrap();
    let found = store
        .user_with_password("U@Example.com", "correct horse")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(found.id, user.id);
    assert!(
        store
            .user_with_password("u@example.com", "wrong")
            .await
            .unwrap()
            .is_none()
    );
    assert!(
        store
            .user_with_password("x@example.com", "correct horse")
            .await
            .unwrap()
            .is_none()
    );
});

#[test]
fn redirect_uris_are_absolute_without_fragments() {
    for good in [
        REDIRECT,
        "http://127.0.0.1:8080/cb?x=1",
        "com.example.app:/oauth",
    ] {
        assert!(check_redirect_uri(good).is_ok(), "{good}");
    }
    for bad in [
        "/relative",
        "javascript:alert(1)",
        "data:text/html,x",
        "https://app.example.com/cb#frag",
        "https://",
        "https://a b",
        "1http://x",
    ] {
        assert!(check_redirect_uri(bad).is_err(), "{bad}");
    }
}
