//! A charger's transactions (endpoint 5): what StartTransaction and StopTransaction left, newest
//! first, with `limit` and `filter` from the GET's body or its query string.

use crate::support::{Api, Charger, assert_record_time, eventually, on_both_stores};
use serde_json::{Value, json};

fn transactions_path(uuid: &str) -> String {
    format!("/api/v3/chargers/{uuid}/transactions")
}

async fn start(charger: &mut Charger, connector: u32, tag: &str, meter: i64, at: &str) -> i64 {
    let payload =
        json!({"connectorId": connector, "idTag": tag, "meterStart": meter, "timestamp": at});
    let answer = charger.call_result("StartTransaction", payload).await;
    answer["transactionId"]
        .as_i64()
        .unwrap_or_else(|| panic!("StartTransaction answer without a transactionId: {answer}"))
}

async fn stop(charger: &mut Charger, id: i64, meter: i64, at: &str, reason: Option<&str>) {
    let mut payload = json!({"transactionId": id, "meterStop": meter, "timestamp": at});
    if let Some(reason) = reason {
        payload["reason"] = json!(reason);
    }
    charger.call_result("StopTransaction", payload).await;
}

/// The transaction ids of a list answer, in order.
fn ids(answer: &Value) -> Vec<i64> {
    answer["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data array: {answer}"))
        .iter()
        .map(|t| t["id"].as_i64().expect("an integer id"))
        .collect()
}

/// A JSON value as a query-string value.
fn query_json(value: &Value) -> String {
    value
        .to_string()
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' | '.' => c.to_string(),
            other => format!("%{:02X}", other as u32),
        })
        .collect()
}

on_both_stores!(
    a_chargers_transactions_come_newest_first_and_filtered,
    |cms| {
        let uuid = cms.add_charger("CP-TXL-1").await;
        let api = Api::new(&cms, &cms.operator_token().await);
        let mut charger = Charger::connect_and_boot(&cms, "CP-TXL-1", "1.0.0").await;
        let first = start(&mut charger, 1, "TAG-A", 1000, "2026-02-10T09:00:00Z").await;
        stop(
            &mut charger,
            first,
            2500,
            "2026-02-10T09:30:00Z",
            Some("Remote"),
        )
        .await;
        let running = start(&mut charger, 2, "TAG-B", 5000, "2026-02-10T10:00:00Z").await;
        let last = start(&mut charger, 1, "tag-c", 0, "2026-02-10T11:00:00Z").await;
        stop(&mut charger, last, 5, "2026-02-10T11:15:00Z", None).await;

        let path = transactions_path(&uuid);
        let list = eventually("three transactions, the last one stopped", async || {
            let answer = api.get_ok(&path).await;
            match answer["data"].as_array() {
                Some(data) if data.len() == 3 && data[0]["stopped_at"].is_string() => Ok(answer),
                _ => Err(answer.to_string()),
            }
        })
        .await;
        assert_eq!(ids(&list), [last, running, first], "newest start first");
        let charger_id = api.charger(&uuid).await.expect("listed")["id"].clone();
        let stopped = &list["data"][2];
        for field in ["created_at", "updated_at"] {
            assert_record_time(&stopped[field], field);
        }
        assert!(stopped["charger_connector_id"].is_i64(), "{stopped}");
        let own = |t: &Value| t["uuid"].as_str().map(str::len);
        assert_eq!(own(stopped), Some(36), "a uuid of its own: {stopped}");
        assert_ne!(stopped["uuid"], list["data"][1]["uuid"]);
        let expected = json!({
            "id": first, "uuid": stopped["uuid"], "station_transaction_id": null, "charger_id": charger_id,
            "charger_connector_id": stopped["charger_connector_id"], "reservation_id": null,
            "id_tag": "TAG-A", "id_tag_status": "Accepted", "meter_start": 1000, "meter_stop": 2500, "total_kwh": "1.50",
            "started_at": "2026-02-10T09:00:00.000000Z", "stopped_at": "2026-02-10T09:30:00.000000Z",
            "stop_reason": "Remote",
            "created_at": stopped["created_at"], "updated_at": stopped["updated_at"],
            "charger": {"uuid": uuid, "identity": "CP-TXL-1", "reference": null},
            "connector": {"connector_id": 1},
            "tariff_uuid": null, "tariff_version": null, "cost": null, "provider_uuid": null,
        });
        assert_eq!(stopped, &expected);
        let active = &list["data"][1];
        for (field, value) in [
            ("meter_stop", Value::Null),
            ("total_kwh", Value::Null),
            ("stopped_at", Value::Null),
            ("stop_reason", Value::Null),
            ("connector", json!({"connector_id": 2})),
        ] {
            assert_eq!(active[field], value, "{field} of a running transaction");
        }
        assert_eq!(
            json!([list["data"][0]["total_kwh"], list["data"][0]["stop_reason"]]),
            json!(["0.01", "Local"]),
            "5 Wh, and a StopTransaction without a reason"
        );

        let body = async |b: Value| ids(&api.expect(200, "GET", &path, Some(&b)).await);
        assert_eq!(body(json!({"limit": 2})).await, [last, running]);
        assert_eq!(
            body(json!({"limit": null, "filter": null})).await,
            [last, running, first]
        );
        let query = async |q: &str| ids(&api.get_ok(&format!("{path}?{q}")).await);
        assert_eq!(query("limit=1").await, [last]);
        let answer = api
            .send(
                "GET",
                &format!("{path}?limit=1"),
                Some(&json!({"limit": 2})),
            )
            .await;
        assert_eq!(
            ids(&answer.json),
            [last, running],
            "the body wins over the query"
        );

        let filtered = async |filter: Value| body(json!({"filter": filter})).await;
        assert_eq!(filtered(json!({"status": "active"})).await, [running]);
        assert_eq!(filtered(json!({"status": "stopped"})).await, [last, first]);
        assert_eq!(filtered(json!({"connector_id": 2})).await, [running]);
        assert_eq!(
            filtered(json!({"id_tag": "TAG-C"})).await,
            [last],
            "case-insensitive"
        );
        let ten = "2026-02-10T10:00:00Z";
        assert_eq!(
            filtered(json!({"started_after": ten})).await,
            [last, running]
        );
        assert_eq!(filtered(json!({"started_before": ten})).await, [first]);
        let ten_in_paris = "2026-02-10T11:00:00+01:00";
        assert_eq!(
            filtered(json!({"started_before": ten_in_paris})).await,
            [first]
        );
        let both = json!({"status": "stopped", "connector_id": 1, "started_after": ten});
        assert_eq!(filtered(both).await, [last]);
        assert_eq!(query("filter[status]=active").await, [running]);
        let stopped_json = query_json(&json!({"status": "stopped"}));
        assert_eq!(
            query(&format!("filter={stopped_json}&limit=1")).await,
            [last]
        );
    }
);

on_both_stores!(listing_transactions_checks_its_input_and_access, |cms| {
    let uuid = cms.add_charger("CP-TXL-2").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let path = transactions_path(&uuid);
    let empty = api.expect(200, "GET", &path, None).await;
    assert_eq!(empty, json!({"data": []}));

    for (body, field, message) in [
        (
            json!({"limit": 0}),
            "limit",
            "The limit field must be between 1 and 10000.",
        ),
        (
            json!({"limit": 10001}),
            "limit",
            "The limit field must be between 1 and 10000.",
        ),
        (
            json!({"limit": 1.5}),
            "limit",
            "The limit field must be an integer.",
        ),
        (
            json!({"limit": "x"}),
            "limit",
            "The limit field must be an integer.",
        ),
        (
            json!({"filter": "stopped"}),
            "filter",
            "The filter field must be an object.",
        ),
        (
            json!({"filter": {"colour": "red"}}),
            "filter.colour",
            "The filter.colour field is prohibited.",
        ),
        (
            json!({"filter": {"status": "paused"}}),
            "filter.status",
            "The selected filter.status is invalid.",
        ),
        (
            json!({"filter": {"connector_id": 0}}),
            "filter.connector_id",
            "The filter.connector id field must be at least 1.",
        ),
        (
            json!({"filter": {"id_tag": 7}}),
            "filter.id_tag",
            "The filter.id tag field must be a string.",
        ),
        (
            json!({"filter": {"started_after": "yesterday"}}),
            "filter.started_after",
            "The filter.started after field must be a valid date.",
        ),
        (
            json!({"filter": {"started_before": "2026-13-01T00:00:00Z"}}),
            "filter.started_before",
            "The filter.started before field must be a valid date.",
        ),
    ] {
        let errors = api.expect_invalid("GET", &path, Some(&body)).await;
        assert_eq!(errors[field], json!([message]), "{body}: {errors}");
    }
    for query in ["limit=0", "limit=x", "filter[status]=paused", "filter=nope"] {
        let answer = api.get(&format!("{path}?{query}")).await;
        assert_eq!(answer.status, 422, "?{query}: {}", answer.body);
    }

    let unauthenticated = api.get_authorized(&path, None).await;
    assert_eq!(
        (unauthenticated.status, unauthenticated.json),
        (401, json!({"message": "Unauthenticated."}))
    );
    let chargers_only = Api::new(
        &cms,
        &cms.create_token("c@example.com", Some("chargers:read"))
            .await,
    );
    let forbidden = chargers_only.get(&path).await;
    assert_eq!(
        (forbidden.status, forbidden.json),
        (403, json!({"message": "This action is unauthorized."}))
    );
    let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
    let unknown = transactions_path("00000000-0000-4000-8000-000000000000");
    let malformed = transactions_path("nope");
    for (api, path) in [(&guest, &path), (&api, &unknown), (&api, &malformed)] {
        let answer = api.get(path).await;
        assert_eq!(answer.status, 404, "GET {path}: {}", answer.body);
        assert!(answer.json["message"].is_string(), "{}", answer.body);
    }
});
