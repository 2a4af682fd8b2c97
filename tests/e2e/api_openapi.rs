//! The OpenAPI document at `/api/openapi.json`: it covers every endpoint the service serves,
//! each with its responses and security, its references resolve and its path parameters are
//! declared; every API endpoint it lists really refuses a request without a token; every
//! operation answers a request that breaks it only with statuses it documents, and its error
//! rows of a path or an input are the standard ones.

use crate::support::{Api, Cms};
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// The error rows an operation documents because of its path and input, as cms declares them:
/// the check reads the one declaration.
use cms_api::error_responses;

/// Every endpoint the service must serve, as the document names it.
const ENDPOINTS: [(&str, &str); 56] = [
    ("GET", "/api/v3/chargers"),
    ("GET", "/api/v3/chargers/{charger_uuid}"),
    ("GET", "/api/v3/chargers/{charger_uuid}/connectors"),
    (
        "PUT",
        "/api/v3/chargers/{charger_uuid}/connectors/{connector_id}",
    ),
    (
        "GET",
        "/api/v3/chargers/{charger_uuid}/connectors/{connector_id}/latest-metervalue",
    ),
    ("GET", "/api/v3/chargers/{charger_uuid}/transactions"),
    ("PUT", "/api/v3/chargers/{charger_uuid}/proxy"),
    ("GET", "/api/v3/chargers/{charger_uuid}/proxy"),
    ("POST", "/api/v2/teams"),
    ("GET", "/api/v2/teams"),
    ("GET", "/api/v3/meters/chargee/{chargee}"),
    ("POST", "/api/v2/teams/{team_id}/meters"),
    ("GET", "/api/v3/sites"),
    ("POST", "/api/v3/sites"),
    ("GET", "/api/v3/sites/{site_uuid}"),
    ("PUT", "/api/v3/sites/{site_uuid}"),
    ("DELETE", "/api/v3/sites/{site_uuid}"),
    ("GET", "/api/v3/sites/{site_uuid}/chargers"),
    ("POST", "/api/v3/sites/{site_uuid}/chargers"),
    ("GET", "/api/v2/teams/{team_id}/sites/{site_id}/connectors"),
    ("GET", "/api/v3/sites/{site_uuid}/smart-charging"),
    ("PUT", "/api/v3/sites/{site_uuid}/smart-charging"),
    ("GET", "/api/v3/sites/{site_uuid}/smart-charging/status"),
    ("POST", "/api/v3/sites/{site_uuid}/teams/invite"),
    ("POST", "/api/v3/sites/{site_uuid}/teams/invite/accept"),
    ("GET", "/api/v3/sites/{site_uuid}/teams"),
    ("GET", "/api/v3/sites/{site_uuid}/teams/{team_uuid}"),
    ("DELETE", "/api/v3/sites/{site_uuid}/teams/{team_uuid}"),
    (
        "POST",
        "/api/v3/sites/{site_uuid}/teams/{team_uuid}/sensitive-data-access",
    ),
    (
        "DELETE",
        "/api/v3/sites/{site_uuid}/teams/{team_uuid}/sensitive-data-access",
    ),
    (
        "POST",
        "/api/v3/sites/{site_uuid}/teams/{team_uuid}/sensitive-data-access/request",
    ),
    ("PUT", "/api/v3/sites/{site_uuid}/teams/{team_uuid}/assets"),
    (
        "POST",
        "/api/v3/sites/{site_uuid}/teams/{team_uuid}/transfer-ownership",
    ),
    ("GET", "/api/v3/teams/{team_uuid}/domains"),
    ("POST", "/api/v3/teams/{team_uuid}/domains"),
    ("DELETE", "/api/v3/teams/{team_uuid}/domains/{domain_id}"),
    ("GET", "/api/v3/teams/{team_uuid}/id-tags"),
    ("POST", "/api/v3/teams/{team_uuid}/id-tags"),
    ("GET", "/api/v3/teams/{team_uuid}/id-tags/{id_tag}"),
    ("PUT", "/api/v3/teams/{team_uuid}/id-tags/{id_tag}"),
    ("DELETE", "/api/v3/teams/{team_uuid}/id-tags/{id_tag}"),
    ("GET", "/api/v3/user/tokens"),
    ("POST", "/api/v3/user/tokens"),
    ("DELETE", "/api/v3/user/tokens/{token_id}"),
    ("POST", "/api/v3/user/tokens/{token_id}/regenerate"),
    ("GET", "/oauth/authorize"),
    ("POST", "/oauth/token"),
    ("GET", "/api/v3/user/oauth-grants"),
    ("DELETE", "/api/v3/user/oauth-grants/{grant_id}"),
    ("POST", "/api/v3/chargers/{charger_uuid}/actions/{action}"),
    ("GET", "/api/v3/chargers/{charger_uuid}/actions"),
    ("GET", "/api/v3/chargers/{charger_uuid}/actions/{action}"),
    ("GET", "/api/v3/chargers/{charger_uuid}/settings"),
    ("PUT", "/api/v3/chargers/{charger_uuid}/settings"),
    ("GET", "/api/v3/chargers/{charger_uuid}/messages"),
    ("GET", "/api/v3/chargers/{charger_uuid}/connection-attempts"),
];

const OPERATION_METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The OAuth endpoints are how a client gets a token: they cannot demand one.
fn needs_a_token(path: &str) -> bool {
    !path.starts_with("/oauth/")
}

/// The document, fetched without a token.
async fn document(cms: &Cms) -> Value {
    let answer = Api::new(cms, "none")
        .get_authorized("/api/openapi.json", None)
        .await;
    assert_eq!(answer.status, 200, "GET /api/openapi.json: {}", answer.body);
    assert!(answer.json.is_object(), "not JSON: {}", answer.body);
    answer.json
}

/// Every operation of the document: (METHOD, path, operation, path item).
fn operations(doc: &Value) -> Vec<(String, String, &Value, &Value)> {
    let paths = doc["paths"].as_object().expect("`paths` is an object");
    paths
        .iter()
        .flat_map(|(path, item)| {
            OPERATION_METHODS.iter().filter_map(move |method| {
                let operation = item.get(*method)?;
                Some((method.to_uppercase(), path.clone(), operation, item))
            })
        })
        .collect()
}

/// The `{name}`s of a path template.
fn template_parameters(path: &str) -> BTreeSet<String> {
    path.split('/')
        .filter_map(|segment| segment.strip_prefix('{')?.strip_suffix('}'))
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_is_documented_with_responses_and_security() {
    let cms = Cms::up().await;
    let doc = document(&cms).await;
    let version = doc["openapi"].as_str().unwrap_or_default();
    assert!(version.starts_with("3.1"), "openapi: {:?}", doc["openapi"]);
    let schemes = doc["components"]["securitySchemes"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(!schemes.is_empty(), "no components.securitySchemes");

    let documented: BTreeSet<(String, String)> = operations(&doc)
        .into_iter()
        .map(|(method, path, _, _)| (method, path))
        .collect();
    let missing: Vec<String> = ENDPOINTS
        .iter()
        .filter(|(method, path)| !documented.contains(&(method.to_string(), path.to_string())))
        .map(|(method, path)| format!("{method} {path}"))
        .collect();

    let mut faults = Vec::new();
    for (method, path, operation, _) in operations(&doc) {
        let responses = operation["responses"].as_object();
        if responses.is_none_or(|r| r.is_empty()) {
            faults.push(format!("{method} {path}: no responses"));
        }
        if !needs_a_token(&path) {
            continue;
        }
        let requirements = operation["security"].as_array();
        let Some(requirements) = requirements.filter(|r| !r.is_empty()) else {
            faults.push(format!("{method} {path}: no security requirement"));
            continue;
        };
        for requirement in requirements {
            let names = requirement
                .as_object()
                .map(|r| r.keys().collect::<Vec<_>>());
            match names {
                Some(names) if !names.is_empty() => {
                    for name in names.into_iter().filter(|n| !schemes.contains_key(*n)) {
                        faults.push(format!("{method} {path}: unknown security scheme {name}"));
                    }
                }
                // `{}` would make the token optional.
                _ => faults.push(format!("{method} {path}: empty security requirement")),
            }
        }
    }
    assert!(
        missing.is_empty() && faults.is_empty(),
        "endpoints not in the document: {missing:#?}\nfaults: {faults:#?}"
    );
}

/// Collects every `$ref` in `value`.
fn references<'a>(value: &'a Value, found: &mut Vec<&'a str>) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(target)) = map.get("$ref") {
                found.push(target);
            }
            map.values().for_each(|v| references(v, found));
        }
        Value::Array(items) => items.iter().for_each(|v| references(v, found)),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_reference_in_the_document_resolves_to_a_schema() {
    let cms = Cms::up().await;
    let doc = document(&cms).await;
    let schemas = doc["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut found = Vec::new();
    references(&doc, &mut found);
    assert!(
        found.contains(&"#/components/schemas/ErrorBody"),
        "error bodies are references to ErrorBody: {found:?}"
    );
    let dangling: BTreeSet<&str> = found
        .into_iter()
        .filter(|target| {
            target
                .strip_prefix("#/components/schemas/")
                .is_none_or(|name| !schemas.contains_key(name))
        })
        .collect();
    assert!(dangling.is_empty(), "unresolved references: {dangling:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_parameter_is_declared() {
    let cms = Cms::up().await;
    let doc = document(&cms).await;
    let mut faults = Vec::new();
    for (method, path, operation, item) in operations(&doc) {
        // Parameters may sit on the operation or on its path item.
        let parameters = [&operation["parameters"], &item["parameters"]]
            .into_iter()
            .filter_map(Value::as_array)
            .flatten();
        let declared: BTreeSet<String> = parameters
            .filter(|p| p["in"] == "path")
            .inspect(|p| {
                if p["required"] != true {
                    faults.push(format!("{method} {path}: path parameter {p} not required"));
                }
            })
            .filter_map(|p| p["name"].as_str().map(str::to_string))
            .collect();
        let in_template = template_parameters(&path);
        for name in in_template.difference(&declared) {
            faults.push(format!(
                "{method} {path}: {{{name}}} is not declared in: path"
            ));
        }
        for name in declared.difference(&in_template) {
            faults.push(format!("{method} {path}: declares {name}, not in the path"));
        }
    }
    assert!(faults.is_empty(), "{faults:#?}");
}

/// `path` with made-up values for its parameters: uuids nobody has, small ids.
fn made_up(path: &str) -> String {
    path.split('/')
        .map(|segment| match segment.strip_prefix('{') {
            Some(name) if name.ends_with("_uuid}") => "00000000-0000-4000-8000-000000000000",
            Some(_) => "1",
            None => segment,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_api_endpoint_refuses_a_request_without_a_token() {
    let cms = Cms::up().await;
    let api = Api::new(&cms, "none");
    let unauthenticated = json!({"message": "Unauthenticated."});
    let mut faults = Vec::new();
    for (method, template) in ENDPOINTS.iter().filter(|(_, path)| needs_a_token(path)) {
        let path = made_up(template);
        let body = (*method != "GET").then(|| json!({}));
        let mut answers = Vec::new();
        let credentials = [
            ("no token", None),
            ("a made-up token", Some("Bearer 1|not-a-real-token")),
        ];
        for (credential, authorization) in credentials {
            let answer = api
                .send_authorized(method, &path, body.as_ref(), authorization)
                .await;
            if (answer.status, &answer.json) != (401, &unauthenticated) {
                answers.push(format!(
                    "with {credential}: {} {}",
                    answer.status, answer.body
                ));
            }
        }
        if !answers.is_empty() {
            faults.push(format!("{method} {path}: {}", answers.join("; ")));
        }
    }
    assert!(faults.is_empty(), "not refused with 401: {faults:#?}");
}

#[test]
fn made_up_paths_fill_every_parameter() {
    assert_eq!(
        made_up("/api/v2/teams/{team_id}/sites/{site_id}/connectors"),
        "/api/v2/teams/1/sites/1/connectors"
    );
    assert_eq!(
        made_up("/api/v3/teams/{team_uuid}/domains/{domain_id}"),
        "/api/v3/teams/00000000-0000-4000-8000-000000000000/domains/1"
    );
    assert_eq!(
        template_parameters("/api/v3/sites/{site_uuid}/teams/{team_uuid}"),
        BTreeSet::from(["site_uuid".to_string(), "team_uuid".to_string()])
    );
}

/// The one scope an operation's `security` names (each names the same one for both schemes).
fn declared_scope(operation: &Value) -> Option<String> {
    let scopes: BTreeSet<String> = operation["security"]
        .as_array()?
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|requirement| requirement.values())
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect();
    assert!(scopes.len() <= 1, "one scope per operation: {operation}");
    scopes.into_iter().next()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_endpoint_demands_the_scope_its_document_declares() {
    let cms = Cms::up().await;
    let doc = document(&cms).await;
    let scopes: Vec<&str> = cms_store::Scope::DESCRIBED
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| *name != cms_store::Scope::ALL)
        .collect();
    let unauthorized = json!({"message": "This action is unauthorized."});
    let (mut without, mut only) = (
        std::collections::HashMap::new(),
        std::collections::HashMap::new(),
    );
    let mut faults = Vec::new();
    for (method, template, operation, _) in operations(&doc) {
        if !needs_a_token(&template) {
            continue;
        }
        let scope = declared_scope(operation).expect("an API operation declares its scope");
        // A token nobody has: token 1 exists, and a narrower token may not touch it (403).
        let path = made_up(&template.replace("{token_id}", "999999"));
        let body = (method != "GET").then(|| json!({}));
        if !without.contains_key(&scope) {
            let others: Vec<&str> = scopes.iter().copied().filter(|s| *s != scope).collect();
            let lacking = cms
                .create_token("operator@example.com", Some(&others.join(",")))
                .await;
            let having = cms.create_token("operator@example.com", Some(&scope)).await;
            without.insert(scope.clone(), format!("Bearer {lacking}"));
            only.insert(scope.clone(), format!("Bearer {having}"));
        }
        let api = Api::new(&cms, "none");
        let lacking = api
            .send_authorized(&method, &path, body.as_ref(), Some(&without[&scope]))
            .await;
        if (lacking.status, &lacking.json) != (403, &unauthorized) {
            faults.push(format!(
                "{method} {template} without {scope}: {} {}",
                lacking.status, lacking.body
            ));
        }
        let having = api
            .send_authorized(&method, &path, body.as_ref(), Some(&only[&scope]))
            .await;
        if (having.status, &having.json) == (403, &unauthorized) {
            faults.push(format!("{method} {template} with only {scope}: refused"));
        }
    }
    assert!(faults.is_empty(), "{faults:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scoped_endpoint_documents_its_401_and_the_403_of_its_scope() {
    let cms = Cms::up().await;
    let doc = document(&cms).await;
    let mut faults = Vec::new();
    for (method, path, operation, _) in operations(&doc) {
        let Some(scope) = declared_scope(operation) else {
            continue;
        };
        let responses = &operation["responses"];
        let forbidden = responses["403"]["description"].as_str().unwrap_or("");
        if !forbidden.contains(&format!("lacks {scope}")) {
            faults.push(format!(
                "{method} {path}: 403 {forbidden:?} does not name {scope}"
            ));
        }
        for status in ["401", "403"] {
            if responses[status]["content"]["application/json"]["schema"]["$ref"]
                != "#/components/schemas/ErrorBody"
            {
                faults.push(format!("{method} {path}: {status} is not an ErrorBody"));
            }
        }
    }
    assert!(faults.is_empty(), "{faults:#?}");
}

/// A request that breaks an operation's input: what it carries, a query string, a body with its
/// content type.
struct Breaking {
    what: String,
    query: String,
    body: Option<(String, &'static str)>,
}

/// Requests that break `operation` every way it takes input: none at all; each of its query
/// parameters `-1` (no page, wait or limit may be); as a JSON body, an array and an object of
/// no fields; as a form, one of nothing it reads.
fn breaking(operation: &Value) -> Vec<Breaking> {
    let mut requests = vec![Breaking {
        what: "no input".into(),
        query: String::new(),
        body: None,
    }];
    let parameters = operation["parameters"].as_array().into_iter().flatten();
    let query: Vec<String> = parameters
        .filter(|p| p["in"] == "query")
        .filter_map(|p| p["name"].as_str())
        .map(|name| format!("{name}=-1"))
        .collect();
    if !query.is_empty() {
        requests.push(Breaking {
            what: "every query parameter -1".into(),
            query: format!("?{}", query.join("&")),
            body: None,
        });
    }
    let content_types = operation["requestBody"]["content"].as_object();
    for content_type in content_types.into_iter().flat_map(|c| c.keys()) {
        let bodies: &[&'static str] = match content_type.as_str() {
            "application/json" => &["[]", "{}"],
            _ => &["unknown=1"],
        };
        for body in bodies {
            requests.push(Breaking {
                what: format!("{content_type} {body}"),
                query: String::new(),
                body: Some((content_type.clone(), *body)),
            });
        }
    }
    requests
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_operation_answers_a_request_that_breaks_it_with_a_status_it_documents() {
    let cms = Cms::up().await;
    let doc = document(&cms).await;
    let bearer = format!("Bearer {}", cms.operator_token().await);
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .expect("http client");
    let mut faults = Vec::new();
    for (method, template, operation, _) in operations(&doc) {
        let documented: BTreeSet<&String> = operation["responses"]
            .as_object()
            .map(|responses| responses.keys().collect())
            .unwrap_or_default();
        // A token nobody has: token 1 is the operator's own.
        let path = made_up(&template.replace("{token_id}", "999999"));
        for request in breaking(operation) {
            let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
            let url = cms.http_url(&format!("{path}{}", request.query));
            let mut sent = client
                .request(method.clone(), url)
                .header("Accept", "application/json")
                .header("Authorization", &bearer);
            if let Some((content_type, body)) = &request.body {
                sent = sent.header("Content-Type", content_type).body(*body);
            }
            let answer = sent.send().await.expect("an answer");
            let status = answer.status().as_u16();
            let body = answer.text().await.unwrap_or_default();
            if !documented.contains(&status.to_string()) {
                faults.push(format!(
                    "{method} {template} with {}: {status} {body}",
                    request.what
                ));
            }
        }
    }
    assert!(faults.is_empty(), "answered, not documented: {faults:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_row_of_a_path_or_an_input_is_the_standard_one_or_says_more() {
    let cms = Cms::up().await;
    let doc = document(&cms).await;
    let mut faults = Vec::new();
    for (method, path, operation, _) in operations(&doc) {
        if declared_scope(operation).is_none() {
            continue;
        }
        for (status, standard, schema) in error_responses::standard(&path, operation) {
            let row = &operation["responses"][status];
            // A row written by hand says more: it begins as the standard one.
            let description = row["description"].as_str().unwrap_or_default();
            if !description.starts_with(&standard) {
                faults.push(format!(
                    "{method} {path}: {status} {description:?} does not begin {standard:?}"
                ));
            }
            let reference = format!("#/components/schemas/{schema}");
            if row["content"]["application/json"]["schema"]["$ref"] != reference.as_str() {
                faults.push(format!("{method} {path}: {status} is not a {schema}"));
            }
        }
    }
    assert!(faults.is_empty(), "{faults:#?}");
}
