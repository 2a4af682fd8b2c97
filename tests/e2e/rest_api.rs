//! The REST API's gatekeeping, error shapes and pagination.

use crate::support::{Api, Charger, Cms, on_both_stores};
use serde_json::{Value, json};
use std::collections::BTreeSet;

on_both_stores!(requests_without_a_valid_token_are_unauthenticated, |cms| {
    let uuid = cms.add_charger("CP-REST-401").await;
    let token = cms.operator_token().await;
    let api = Api::new(&cms, &token);
    let (id, secret) = token.split_once('|').expect("id|secret");
    let other_secret = "0".repeat(40);
    assert_ne!(other_secret, secret);

    let wrong_secret = format!("Bearer {id}|{other_secret}");
    let unknown_id = format!("Bearer 987654|{secret}");
    let no_id = format!("Bearer {secret}");
    let authorizations = [
        None,
        Some("Bearer"),
        Some("Bearer not-a-token"),
        Some(no_id.as_str()),
        Some(wrong_secret.as_str()),
        Some(unknown_id.as_str()),
        Some("Basic b3BlcmF0b3I6cGFzc3dvcmQ="),
    ];
    let meter_value = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
    for path in ["/api/v3/chargers", meter_value.as_str()] {
        for authorization in authorizations {
            let answer = api.get_authorized(path, authorization).await;
            assert_eq!(
                (answer.status, &answer.json),
                (401, &json!({"message": "Unauthenticated."})),
                "GET {path} with Authorization {authorization:?}: {}",
                answer.body
            );
        }
    }
    assert_eq!(
        api.get("/api/v3/chargers").await.status,
        200,
        "the real token works"
    );
});

on_both_stores!(a_token_lacking_the_scope_is_forbidden, |cms| {
    let uuid = cms.add_charger("CP-REST-403").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-REST-403", "1.0.0").await;
    let status = json!({"connectorId": 1, "errorCode": "NoError", "status": "Available"});
    charger.call_result("StatusNotification", status).await;
    let meter_value = format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue");
    let forbidden = json!({"message": "This action is unauthorized."});

    let sites_only = Api::new(
        &cms,
        &cms.create_token("s@example.com", Some("sites:read")).await,
    );
    let chargers_only = Api::new(
        &cms,
        &cms.create_token("c@example.com", Some("chargers:read"))
            .await,
    );
    let meters_only = Api::new(
        &cms,
        &cms.create_token("m@example.com", Some("meter-values:read"))
            .await,
    );
    let both = Api::new(
        &cms,
        &cms.create_token("b@example.com", Some("chargers:read,meter-values:read"))
            .await,
    );

    for (api, path) in [
        (&sites_only, "/api/v3/chargers"),
        (&sites_only, meter_value.as_str()),
        (&chargers_only, meter_value.as_str()),
        (&meters_only, "/api/v3/chargers"),
    ] {
        let answer = api.get(path).await;
        assert_eq!(
            (answer.status, &answer.json),
            (403, &forbidden),
            "GET {path}: {}",
            answer.body
        );
    }

    assert_eq!(chargers_only.get("/api/v3/chargers").await.status, 200);
    both.wait_for_latest_meter_value(&uuid, 1, r#"{"connectorId":1,"meterValue":[]}"#)
        .await;
    assert_eq!(meters_only.get(&meter_value).await.status, 200);
});

fn page_uuids(page: &Value) -> Vec<String> {
    let data = page["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data array: {page}"));
    data.iter()
        .map(|c| c["uuid"].as_str().expect("uuid").to_string())
        .collect()
}

on_both_stores!(thirty_chargers_come_in_pages_of_twenty_five, |cms| {
    let mut added = BTreeSet::new();
    for n in 1..=30 {
        added.insert(cms.add_charger(&format!("CP-PAGE-{n:02}")).await);
    }
    let api = Api::new(&cms, &cms.operator_token().await);

    let first = api.get_ok("/api/v3/chargers").await;
    let explicit_first = api.get_ok("/api/v3/chargers?page=1").await;
    assert_eq!(
        page_uuids(&first),
        page_uuids(&explicit_first),
        "no page means page 1"
    );
    let second = api.get_ok("/api/v3/chargers?page=2").await;
    let beyond = api.get_ok("/api/v3/chargers?page=3").await;

    assert_eq!(page_uuids(&first).len(), 25, "page 1: {}", first["meta"]);
    assert_eq!(page_uuids(&second).len(), 5, "page 2: {}", second["meta"]);
    assert_eq!(page_uuids(&beyond).len(), 0, "page 3: {}", beyond["meta"]);
    let listed: BTreeSet<String> = page_uuids(&first)
        .into_iter()
        .chain(page_uuids(&second))
        .collect();
    assert_eq!(
        listed, added,
        "the two pages together list each charger exactly once"
    );

    let link = |n: u32| json!(format!("/api/v3/chargers?page={n}"));
    for (page, n, prev, next, from, to) in [
        (&first, 1, Value::Null, link(2), json!(1), json!(25)),
        (&second, 2, link(1), Value::Null, json!(26), json!(30)),
        (&beyond, 3, link(2), Value::Null, Value::Null, Value::Null),
    ] {
        let (links, meta) = (&page["links"], &page["meta"]);
        assert_eq!(links["first"], link(1), "page {n} links: {links}");
        assert_eq!(links["prev"], prev, "page {n} links: {links}");
        assert_eq!(links["next"], next, "page {n} links: {links}");
        assert!(
            links.get("last").is_some(),
            "page {n} links has no last: {links}"
        );
        assert!(
            links["last"].is_null() || links["last"] == link(2),
            "page {n} links.last: {links}"
        );
        assert_eq!(meta["current_page"], n, "page {n} meta: {meta}");
        assert_eq!(meta["per_page"], 25, "page {n} meta: {meta}");
        assert_eq!(meta["from"], from, "page {n} meta: {meta}");
        assert_eq!(meta["to"], to, "page {n} meta: {meta}");
        let path = meta["path"]
            .as_str()
            .unwrap_or_else(|| panic!("page {n} meta.path: {meta}"));
        assert!(
            path.ends_with("/api/v3/chargers"),
            "page {n} meta.path: {meta}"
        );
        let url = meta["current_page_url"]
            .as_str()
            .unwrap_or_else(|| panic!("meta: {meta}"));
        assert!(
            url.ends_with(&format!("/api/v3/chargers?page={n}")),
            "page {n} meta: {meta}"
        );
    }
});

on_both_stores!(
    a_page_that_is_not_a_positive_integer_is_unprocessable,
    |cms| {
        let api = Api::new(&cms, &cms.operator_token().await);

        for page in ["0", "-1", "abc", "1.5"] {
            let answer = api.get(&format!("/api/v3/chargers?page={page}")).await;
            assert_eq!(answer.status, 422, "page={page}: {}", answer.body);
            assert!(
                answer.json["message"].is_string(),
                "page={page}: {}",
                answer.body
            );
            let errors = answer.json["errors"]["page"].as_array();
            assert!(
                errors.is_some_and(|e| !e.is_empty() && e.iter().all(Value::is_string)),
                "page={page} should explain errors.page: {}",
                answer.body
            );
        }
    }
);

// `/readyz` answers 200 only while the store does.
on_both_stores!(health_and_readiness_probes_answer_without_a_token, |cms| {
    let api = Api::new(&cms, "none");
    for path in ["/healthz", "/readyz"] {
        let answer = api.get_authorized(path, None).await;
        assert_eq!(answer.status, 200, "GET {path}: {}", answer.body);
    }
});

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_routes_and_methods_answer_json() {
    let cms = Cms::up().await;
    let api = Api::new(&cms, "none");
    for path in ["/api/v3/no-such-thing", "/api/v9/chargers", "/nowhere"] {
        let answer = api.get_authorized(path, None).await;
        assert_eq!(answer.status, 404, "GET {path}: {}", answer.body);
        assert!(
            answer.json["message"].is_string(),
            "GET {path}: {}",
            answer.body
        );
    }
    for (method, path) in [
        ("DELETE", "/api/v3/chargers"),
        ("PATCH", "/api/v2/teams"),
        ("PUT", "/api/v2/teams"),
    ] {
        let answer = api.send_authorized(method, path, None, None).await;
        assert_eq!(answer.status, 405, "{method} {path}: {}", answer.body);
        assert!(
            answer.json["message"].is_string(),
            "{method} {path}: {}",
            answer.body
        );
    }
}

/// POSTs `body` as-is with `Content-Type: application/json`: (status, body parsed as JSON).
async fn post_raw(cms: &Cms, token: &str, path: &str, body: Vec<u8>) -> (u16, Value) {
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("http client");
    let response = client
        .post(cms.http_url(path))
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json")
        .body(body)
        .send()
        .await
        .unwrap_or_else(|e| panic!("POST {path} failed: {e}"));
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

on_both_stores!(a_body_that_is_not_json_is_a_bad_request, |cms| {
    let token = cms.operator_token().await;
    for body in ["not json", "{\"name\": ", "[1, 2]", "\"a string\""] {
        let (status, json) = post_raw(&cms, &token, "/api/v2/teams", body.into()).await;
        assert_eq!(status, 400, "{body:?}: {json}");
        assert!(json["message"].is_string(), "{body:?}: {json}");
    }
});

on_both_stores!(a_body_over_the_limit_is_too_large, |cms| {
    let token = cms.operator_token().await;
    let name = "n".repeat(2 << 20);
    let body =
        serde_json::to_vec(&json!({"name": name, "email": "a@b.example", "type": "private"}))
            .expect("a JSON body");
    let (status, json) = post_raw(&cms, &token, "/api/v2/teams", body).await;
    assert_eq!(status, 413, "a 2 MiB body: {json}");
    assert!(json["message"].is_string(), "{json}");
    // The actions' endpoint reads its body as raw bytes (an OCPP payload): the same answer.
    let payload = serde_json::to_vec(&json!({"type": name})).expect("a JSON body");
    let path = "/api/v3/chargers/00000000-0000-4000-8000-000000000000/actions/reset";
    let (status, json) = post_raw(&cms, &token, path, payload).await;
    assert_eq!(status, 413, "a 2 MiB action: {json}");
    assert!(json["message"].is_string(), "{json}");
    let teams = Api::new(&cms, &token).get_ok("/api/v2/teams").await;
    assert_eq!(
        teams["data"].as_array().map(Vec::len),
        Some(2),
        "no team was made: {teams}"
    );
});
