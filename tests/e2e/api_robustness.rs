//! Input no client should send, answered with a 4xx and never a 5xx: on PostgreSQL a NUL
//! character in text, or an offset past i64, would otherwise reach the database as an error.

use crate::support::{Api, on_both_stores};
use serde_json::json;

on_both_stores!(nul_characters_and_huge_numbers_get_a_4xx, |cms| {
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);

    let errors = api
        .expect_invalid(
            "POST",
            "/api/v2/teams",
            Some(&json!({"name": "a\u{0}b", "email": "t@example.com", "type": "business"})),
        )
        .await;
    assert_eq!(
        errors["name"],
        json!(["The name field must not contain NUL characters."])
    );

    let site = json!({"name": "Depot", "street": "Stationsplein", "house_number": 12,
        "postal_code": "1012 AB", "city": "Amsterdam", "country": "NL",
        "house_number_addition": ["\u{0}"]});
    let errors = api
        .expect_invalid("POST", "/api/v3/sites", Some(&site))
        .await;
    assert!(errors["house_number_addition"].is_array(), "{errors}");

    let answer = api
        .get("/api/v3/chargers/00000000-0000-4000-8000-00000000%00")
        .await;
    assert_eq!(
        (answer.status, answer.json["message"].is_string()),
        (404, true),
        "{}",
        answer.body
    );

    // Escapes that decode to no UTF-8 name nothing either, in any path segment.
    for path in [
        "/api/v3/chargers/%FF",
        "/api/v3/sites/%C3%28/chargers",
        "/api/v3/teams/%80/id-tags",
    ] {
        let answer = api.get(path).await;
        assert_eq!(
            (answer.status, answer.json["message"].is_string()),
            (404, true),
            "{path}: {}",
            answer.body
        );
    }

    // A uuid in capitals names the same charger (RFC 9562 compares them case-insensitively).
    let uuid = cms.add_charger("CP-CAPITALS").await;
    let answer = api
        .get(&format!("/api/v3/chargers/{}", uuid.to_uppercase()))
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.json["data"]["uuid"],
        uuid.as_str(),
        "{}",
        answer.body
    );

    let answer = api.get("/api/v3/chargers?page=1%00").await;
    assert_eq!(answer.status, 400, "{}", answer.body);

    let answer = api
        .get(&format!("/api/v3/chargers?page={}", i64::MAX))
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.json["data"], json!([]));
    assert_eq!(answer.json["meta"]["from"], json!(null));

    let answer = reqwest::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(cms.http_url("/oauth/token"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("grant_type=authorization_code&client_id=a%00&client_secret=x&code=y")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 401);

    // And the service is unharmed.
    api.get_ok("/api/v2/teams").await;
});
