//! cms's OCPI endpoints as a party calls them: `Authorization: Token <base64>`, the envelope
//! read back. cms's own tests of its OCPI side (the independent eMSP is support/ocpi_emsp.rs).

use super::REPLY_TIMEOUT;
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use base64::Engine;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A party's client of cms's OCPI endpoints.
pub struct Ocpi {
    base: String,
    client: reqwest::Client,
}

/// An OCPI answer: HTTP status, headers, the envelope as JSON.
#[derive(Debug)]
pub struct OcpiAnswer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub json: Value,
}

impl OcpiAnswer {
    /// The envelope's `status_code`.
    pub fn code(&self) -> i64 {
        self.json["status_code"].as_i64().unwrap_or(-1)
    }
    pub fn header(&self, name: &str) -> Option<String> {
        (self.headers.get(name)).and_then(|v| v.to_str().ok().map(str::to_string))
    }
}

/// `Token <base64 of token>`, as OCPI 2.2.1 sends it.
pub fn token_header(token: &str) -> String {
    format!(
        "Token {}",
        base64::engine::general_purpose::STANDARD.encode(token)
    )
}

impl Ocpi {
    /// cms's OCPI at `base` (`http://127.0.0.1:PORT`).
    pub fn at(base: &str) -> Ocpi {
        Ocpi {
            base: base.to_string(),
            client: reqwest::Client::builder()
                .no_proxy()
                // A fresh connection each: cms closes one whose request body it did not read
                // (a refused request), and a pooled one could be reused just as it closes.
                .pool_max_idle_per_host(0)
                .timeout(REPLY_TIMEOUT)
                .build()
                .expect("http client"),
        }
    }

    /// `method` on `path` (under the base, e.g. `/ocpi/versions`, or a whole URL) with `token`.
    pub async fn call(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&Value>,
    ) -> OcpiAnswer {
        let url = if path.starts_with("http") {
            path.to_string()
        } else {
            format!("{}{path}", self.base)
        };
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let mut request = self.client.request(method, &url);
        if let Some(token) = token {
            request = request.header("authorization", token_header(token));
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.expect("cms answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        OcpiAnswer {
            status,
            headers,
            json: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    /// `method` on `path` with `body` sent as written (malformed on purpose).
    pub async fn call_raw(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: &str,
    ) -> OcpiAnswer {
        let url = format!("{}{path}", self.base);
        let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
        let mut request = (self.client.request(method, &url))
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(token) = token {
            request = request.header("authorization", token_header(token));
        }
        let response = request.send().await.expect("cms answers");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let text = response.text().await.unwrap_or_default();
        OcpiAnswer {
            status,
            headers,
            json: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    pub async fn get(&self, path: &str, token: &str) -> OcpiAnswer {
        self.call("GET", path, Some(token), None).await
    }
}

// A small eMSP of cms's own tests: versions, details (credentials, locations, tokens) and
// credentials, accepting the tokens it is told of.

/// The eMSP's side of a handshake, as the test sees it afterwards.
#[derive(Default)]
pub struct Seen {
    /// Tokens the eMSP accepts (`Token base64(..)` as sent).
    pub accepts: Vec<String>,
    /// The credentials cms posted, and whether cms's versions answered the token in them.
    pub posted: Option<Value>,
    pub cms_versions_answered: Option<u16>,
    pub deleted_with: Option<String>,
}

#[derive(Clone)]
struct Emsp {
    base: String,
    seen: Arc<Mutex<Seen>>,
}

fn envelope(data: Value) -> Json<Value> {
    Json(json!({"data": data, "status_code": 1000, "timestamp": "2026-11-29T10:00:00Z"}))
}

fn allowed(emsp: &Emsp, headers: &HeaderMap) -> bool {
    let sent = headers.get("authorization").and_then(|v| v.to_str().ok());
    sent.is_some_and(|s| emsp.seen.lock().unwrap().accepts.iter().any(|a| a == s))
}

async fn versions(State(emsp): State<Emsp>, headers: HeaderMap) -> Result<Json<Value>, StatusCode> {
    if !allowed(&emsp, &headers) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    Ok(envelope(
        json!([{"version": "2.2.1", "url": format!("{}/2.2.1", emsp.base)}]),
    ))
}

async fn details(State(emsp): State<Emsp>, headers: HeaderMap) -> Result<Json<Value>, StatusCode> {
    if !allowed(&emsp, &headers) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    let url = |m: &str| format!("{}/{m}", emsp.base);
    Ok(envelope(json!({"version": "2.2.1", "endpoints": [
        {"identifier": "credentials", "role": "RECEIVER", "url": url("credentials")},
        {"identifier": "locations", "role": "RECEIVER", "url": url("locations")},
        {"identifier": "tokens", "role": "SENDER", "url": url("tokens")},
    ]})))
}

async fn credentials_post(
    State(emsp): State<Emsp>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Result<Json<Value>, StatusCode> {
    if !allowed(&emsp, &headers) {
        return Err(StatusCode::UNAUTHORIZED);
    }
    // As an eMSP does: cms's versions, with the token cms gave.
    let token = body["token"].as_str().unwrap_or_default();
    let cms = Ocpi::at("");
    let answer = cms
        .get(body["url"].as_str().unwrap_or_default(), token)
        .await;
    let mut seen = emsp.seen.lock().unwrap();
    seen.posted = Some(body);
    seen.cms_versions_answered = Some(answer.status);
    seen.accepts.push(token_header("EMSP-TOKEN-C"));
    Ok(envelope(json!({
        "token": "EMSP-TOKEN-C", "url": format!("{}/versions", emsp.base),
        "roles": [{"role": "EMSP", "country_code": "NL", "party_id": "EMP",
                   "business_details": {"name": "The eMSP"}}]
    })))
}

async fn credentials_delete(State(emsp): State<Emsp>, headers: HeaderMap) -> Json<Value> {
    let sent = headers.get("authorization").and_then(|v| v.to_str().ok());
    emsp.seen.lock().unwrap().deleted_with = sent.map(str::to_string);
    Json(json!({"status_code": 1000, "timestamp": "2026-11-29T10:00:00Z"}))
}

/// An eMSP on loopback accepting `token`; its base URL and what it saw.
pub async fn emsp(token: &str) -> (String, Arc<Mutex<Seen>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Seen {
        accepts: vec![token_header(token)],
        ..Seen::default()
    }));
    let app = axum::Router::new()
        .route("/versions", get(versions))
        .route("/2.2.1", get(details))
        .route(
            "/credentials",
            axum::routing::post(credentials_post).delete(credentials_delete),
        )
        .with_state(Emsp {
            base: base.clone(),
            seen: seen.clone(),
        });
    tokio::spawn(async move { axum::serve(listener, app).await });
    (base, seen)
}

/// Gives the team its CPO identity NL/CMS.
pub async fn set_identity(api: &super::Api, team: &str) {
    let identity = json!({"country_code": "NL", "party_id": "CMS", "name": "Charging Co"});
    let path = format!("/api/v3/teams/{team}/ocpi");
    api.expect(200, "PUT", &path, Some(&identity)).await;
}

/// A provider of `team` (country NL, `party_id`) registered over OCPI by an eMSP of
/// [`emsp`]'s: its REST path and the token C it calls cms with. The team has its identity.
pub async fn registered_party(
    cms: &super::Cms,
    api: &super::Api,
    team: &str,
    party_id: &str,
) -> (String, String) {
    let body =
        json!({"name": format!("eMSP {party_id}"), "country_code": "NL", "party_id": party_id});
    let created = api
        .expect(
            201,
            "POST",
            &format!("/api/v3/teams/{team}/providers"),
            Some(&body),
        )
        .await;
    let uuid = created["data"]["uuid"].as_str().expect("a provider uuid");
    let provider = format!("/api/v3/teams/{team}/providers/{uuid}");
    let issued = api
        .expect(201, "POST", &format!("{provider}/ocpi/token"), None)
        .await;
    let token_a = issued["data"]["token"].as_str().expect("a token A");
    let token_b = format!("{party_id}-TOKEN-B");
    let (emsp_base, _) = emsp(&token_b).await;
    let credentials = json!({"token": token_b, "url": format!("{emsp_base}/versions"),
        "roles": [{"role": "EMSP", "country_code": "NL", "party_id": party_id,
                   "business_details": {"name": format!("eMSP {party_id}")}}]});
    let ocpi = Ocpi::at(&cms.http_url(""));
    let answer = ocpi
        .call(
            "POST",
            "/ocpi/2.2.1/credentials",
            Some(token_a),
            Some(&credentials),
        )
        .await;
    assert_eq!(answer.code(), 1000, "registered: {:?}", answer.json);
    let token_c = answer.json["data"]["token"]
        .as_str()
        .expect("a token C")
        .to_string();
    (provider, token_c)
}

/// Publishes `site` to the providers `provider_uuids` over OCPI: gives it an address (a
/// Location needs one; the operators' default site has none) and coordinates.
pub async fn publish(api: &super::Api, site: &str, provider_uuids: &[&str]) {
    let address = super::rest::site_body("Depot");
    api.expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&address))
        .await;
    let roaming = json!({"latitude": "52.378900", "longitude": "4.900400",
                         "provider_uuids": provider_uuids});
    api.expect(
        200,
        "PUT",
        &format!("/api/v3/sites/{site}/roaming"),
        Some(&roaming),
    )
    .await;
}
