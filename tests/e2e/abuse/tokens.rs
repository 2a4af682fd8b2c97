//! Abuse cases of personal access tokens: a narrow token must not take or remove a wider one.

use crate::support::{Api, Cms};
use serde_json::json;

const TOKENS: &str = "/api/v3/user/tokens";

fn id_of(plain: &str) -> &str {
    plain.split_once('|').expect("`<id>|<secret>`").0
}

#[tokio::test]
async fn a_narrow_token_can_neither_regenerate_nor_revoke_a_wider_one() {
    let cms = Cms::up().await;
    let email = "owner@example.com";
    let wide = cms.create_token(email, None).await;
    let narrow = cms
        .create_token(email, Some("tokens:read,tokens:write"))
        .await;
    let narrow_api = Api::new(&cms, &narrow);
    let wide_api = Api::new(&cms, &wide);

    let regenerate = format!("{TOKENS}/{}/regenerate", id_of(&wide));
    let taken = narrow_api.send("POST", &regenerate, None).await;
    assert_eq!(taken.status, 403, "{}", taken.body);
    assert!(
        !taken.body.contains("plain_text_token"),
        "no secret of the wider token: {}",
        taken.body
    );
    let revoked = narrow_api
        .send("DELETE", &format!("{TOKENS}/{}", id_of(&wide)), None)
        .await;
    assert_eq!(revoked.status, 403, "{}", revoked.body);
    assert_eq!(
        wide_api.get(TOKENS).await.status,
        200,
        "the `*` token still works with its old secret"
    );

    // Within its own reach the narrow token still manages tokens.
    let made = narrow_api
        .expect(
            201,
            "POST",
            TOKENS,
            Some(&json!({"name": "reader", "scopes": ["tokens:read"]})),
        )
        .await;
    let reader = made["plain_text_token"].as_str().expect("a token");
    narrow_api
        .expect(
            200,
            "POST",
            &format!("{TOKENS}/{}/regenerate", id_of(reader)),
            None,
        )
        .await;
    narrow_api
        .expect(200, "DELETE", &format!("{TOKENS}/{}", id_of(reader)), None)
        .await;
    // And the wide token may act on the narrow one.
    wide_api
        .expect(200, "DELETE", &format!("{TOKENS}/{}", id_of(&narrow)), None)
        .await;
}
