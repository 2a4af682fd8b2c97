//! Every OCPI endpoint under bad input (docs/ocpi.md "The wire"): unknown tokens, another
//! party's or made-up objects, malformed bodies and parameters. The answer is always an OCPI
//! envelope with a 2xxx status and a 4xx HTTP status (or a success where the input was fine),
//! never a 5xx; and cms answers the next request as before.

use crate::support::ocpi::{Ocpi, registered_party, set_identity};
use crate::support::rest::{team_of_type, uuid_of};
use crate::support::{Api, Cms};
use serde_json::{Value, json};

/// Every OCPI endpoint a party calls, by method; `{..}` are filled in per round.
const ENDPOINTS: &[(&str, &str)] = &[
    ("GET", "/ocpi/versions"),
    ("GET", "/ocpi/2.2.1"),
    ("GET", "/ocpi/2.2.1/credentials"),
    ("PUT", "/ocpi/2.2.1/credentials"),
    ("POST", "/ocpi/2.2.1/credentials"),
    ("GET", "/ocpi/2.2.1/locations"),
    ("GET", "/ocpi/2.2.1/locations/{location}"),
    ("GET", "/ocpi/2.2.1/locations/{location}/{evse}"),
    ("GET", "/ocpi/2.2.1/locations/{location}/{evse}/{connector}"),
    ("GET", "/ocpi/2.2.1/tariffs"),
    ("GET", "/ocpi/2.2.1/sessions"),
    ("PUT", "/ocpi/2.2.1/sessions/{session}/charging_preferences"),
    ("GET", "/ocpi/2.2.1/cdrs"),
    ("GET", "/ocpi/2.2.1/tokens/{cc}/{pid}/{token}"),
    ("PUT", "/ocpi/2.2.1/tokens/{cc}/{pid}/{token}"),
    ("PATCH", "/ocpi/2.2.1/tokens/{cc}/{pid}/{token}"),
    ("POST", "/ocpi/2.2.1/commands/START_SESSION"),
    ("POST", "/ocpi/2.2.1/commands/STOP_SESSION"),
    ("POST", "/ocpi/2.2.1/commands/UNLOCK_CONNECTOR"),
    ("POST", "/ocpi/2.2.1/commands/RESERVE_NOW"),
    ("POST", "/ocpi/2.2.1/commands/CANCEL_RESERVATION"),
    ("POST", "/ocpi/2.2.1/commands/SELF_DESTRUCT"),
];

/// Values of every JSON type and some that break limits or formats.
fn bad_values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(-1),
        json!(1e300),
        json!("x".repeat(5000)),
        json!("2026-13-45T99:99:99Z"),
        json!([]),
        json!({}),
        json!({"nested": {"deep": [1, 2, {"x": null}]}}),
    ]
}

/// Bodies: none, not JSON, JSON of the wrong shape, and objects whose every known field of
/// the modules is set to each bad value in turn.
fn bad_bodies() -> Vec<Option<String>> {
    let fields = [
        "token",
        "url",
        "roles",
        "uid",
        "type",
        "contract_id",
        "issuer",
        "valid",
        "whitelist",
        "last_updated",
        "response_url",
        "location_id",
        "evse_uid",
        "connector_id",
        "session_id",
        "reservation_id",
        "expiry_date",
        "authorization_reference",
    ];
    let mut bodies = vec![
        None,
        Some("{".into()),
        Some("[1,2]".into()),
        Some("\"text\"".into()),
    ];
    for value in bad_values() {
        let object: serde_json::Map<String, Value> = fields
            .iter()
            .map(|f| (f.to_string(), value.clone()))
            .collect();
        bodies.push(Some(Value::Object(object).to_string()));
    }
    bodies
}

fn fill(template: &str, ids: &[(&str, &str)]) -> String {
    ids.iter()
        .fold(template.to_string(), |path, (name, value)| {
            path.replace(&format!("{{{name}}}"), value)
        })
}

async fn send(
    ocpi: &Ocpi,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&str>,
) -> (u16, Value) {
    let answer = match body {
        Some(text) => ocpi.call_raw(method, path, Some(token), text).await,
        None => ocpi.call(method, path, Some(token), None).await,
    };
    (answer.status, answer.json)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_bad_input_gets_a_server_error_or_another_partys_data() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let charger = cms.add_charger("CP-OCPI-BAD").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    set_identity(&api, &team).await;
    let (_, token) = registered_party(&cms, &api, &team, "EMP").await;
    let ocpi = Ocpi::at(&cms.http_url(""));

    let (long_session, long_token) = ("s".repeat(300), "t".repeat(100));
    let rounds: Vec<Vec<(&str, &str)>> = vec![
        // Another party's path segments (the token's party is NL/EMP).
        vec![
            ("location", "0b2a5e0e-0000-4000-8000-000000000000"),
            ("evse", &charger),
            ("connector", "1"),
            ("session", "nope"),
            ("cc", "DE"),
            ("pid", "XYZ"),
            ("token", "T1"),
        ],
        // Made-up and over-long segments.
        vec![
            ("location", "x"),
            ("evse", "y"),
            ("connector", "99999999999999999999"),
            ("session", &long_session),
            ("cc", "NL"),
            ("pid", "EMP"),
            ("token", &long_token),
        ],
        // Its own party, with bodies that break every rule.
        vec![
            ("location", "%00"),
            ("evse", "%ff"),
            ("connector", "-1"),
            ("session", "1"),
            ("cc", "NL"),
            ("pid", "EMP"),
            ("token", "T2"),
        ],
    ];
    let mut failures = Vec::new();
    for (method, template) in ENDPOINTS {
        // Without a valid token: 401 before anything else.
        let path = fill(template, &rounds[0]);
        let (status, body) = send(&ocpi, method, &path, "not-a-token", Some("{")).await;
        if status != 401 || body["status_code"] != 2000 {
            failures.push(format!(
                "{method} {path} with an unknown token: {status} {body}"
            ));
        }
        for round in &rounds {
            let path = fill(template, round);
            let bodies = if *method == "GET" {
                vec![None]
            } else {
                bad_bodies()
            };
            for body in &bodies {
                let (status, answer) = send(&ocpi, method, &path, &token, body.as_deref()).await;
                let code = answer["status_code"].as_i64().unwrap_or(0);
                let enveloped = answer["timestamp"].is_string() && code > 0;
                let fine = match status {
                    200..=299 => (1000..2000).contains(&code),
                    400..=499 => (2000..3000).contains(&code),
                    _ => false,
                };
                // Another party's objects are never served.
                let leaked = status == 200 && answer.to_string().contains("\"party_id\":\"XYZ\"");
                if !enveloped || !fine || leaked {
                    failures.push(format!("{method} {path} {body:?}: {status} {answer}"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} bad answers:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // cms is as it was.
    let versions = ocpi.get("/ocpi/versions", &token).await;
    assert_eq!(versions.code(), 1000);
}
