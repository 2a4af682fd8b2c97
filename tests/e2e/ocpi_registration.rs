//! OCPI registration (docs/ocpi.md "Connecting a provider"), end to end: the team's CPO
//! identity, token A issued and exchanged by an eMSP for its own token, rotated, unregistered;
//! and cms registering with an eMSP that gave it a token A. The eMSP here is a small axum app
//! of the test's (tests/e2e/ocpi_emsp.rs runs the independent Python one).

use crate::support::ocpi::{Ocpi, emsp, token_header};
use crate::support::rest::{team_of_type, uuid_of};
use crate::support::{Api, Cms};
use serde_json::json;

/// cms with a team identity and a provider NL/EMP; the provider's REST path.
async fn connected_team(cms: &Cms) -> (Api, String) {
    let api = Api::new(cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let identity = format!("/api/v3/teams/{team}/ocpi");
    api.expect(404, "GET", &identity, None).await;
    let bad = json!({"country_code": "nl", "party_id": "TOOLONG", "name": ""});
    let errors = api.expect_invalid("PUT", &identity, Some(&bad)).await;
    for field in ["country_code", "party_id", "name"] {
        assert!(errors[field].is_array(), "{field}: {errors}");
    }
    let provider = api
        .expect(
            201,
            "POST",
            &format!("/api/v3/teams/{team}/providers"),
            Some(&json!({"name": "The eMSP", "country_code": "NL", "party_id": "EMP"})),
        )
        .await;
    let provider = format!(
        "/api/v3/teams/{team}/providers/{}",
        uuid_of(&provider["data"])
    );
    // No identity yet: no token A.
    api.expect(409, "POST", &format!("{provider}/ocpi/token"), None)
        .await;
    let good = json!({"country_code": "NL", "party_id": "CMS", "name": "Charging Co",
                      "website": "https://charging.example"});
    let set = api.expect(200, "PUT", &identity, Some(&good)).await;
    assert_eq!(set["data"]["party_id"], "CMS");
    (api, provider)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emsp_registers_with_token_a_rotates_and_unregisters() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let (api, provider) = connected_team(&cms).await;
    let ocpi = Ocpi::at(&cms.http_url(""));
    let (emsp_base, _seen) = emsp("EMSP-TOKEN-B").await;

    let issued = api
        .expect(201, "POST", &format!("{provider}/ocpi/token"), None)
        .await;
    let token_a = issued["data"]["token"].as_str().unwrap().to_string();
    let versions_url = issued["data"]["versions_url"].as_str().unwrap().to_string();
    assert_eq!(versions_url, cms.http_url("/ocpi/versions"));

    // Unknown or missing tokens: 401 with an OCPI envelope, and the request ids echoed.
    let unknown = ocpi
        .call("GET", "/ocpi/versions", Some("nobody"), None)
        .await;
    assert_eq!(
        (unknown.status, unknown.code()),
        (401, 2000),
        "{:?}",
        unknown.json
    );
    let missing = ocpi.call("GET", "/ocpi/versions", None, None).await;
    assert_eq!(missing.status, 401);
    assert!(missing.header("x-request-id").is_some());

    // Token A reads versions and details, but no module.
    let versions = ocpi.get("/ocpi/versions", &token_a).await;
    assert_eq!(versions.code(), 1000, "{:?}", versions.json);
    let details_url = versions.json["data"][0]["url"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(versions.json["data"][0]["version"], "2.2.1");
    let details = ocpi.get(&details_url, &token_a).await;
    let endpoints = details.json["data"]["endpoints"]
        .as_array()
        .unwrap()
        .clone();
    let module = |id: &str| {
        let e = endpoints.iter().find(|e| e["identifier"] == id).expect(id);
        e["url"].as_str().unwrap().to_string()
    };
    let credentials = module("credentials");
    for listed in [
        "locations",
        "tariffs",
        "sessions",
        "cdrs",
        "tokens",
        "commands",
    ] {
        assert!(module(listed).ends_with(&format!("/ocpi/2.2.1/{listed}")));
    }
    // Token A opens nothing but versions and the registration itself.
    let early = ocpi.get(&credentials, &token_a).await;
    assert_eq!(
        (early.status, early.code()),
        (405, 2000),
        "{:?}",
        early.json
    );

    // Malformed credentials: 2001, nothing registered.
    let malformed = ocpi
        .call(
            "POST",
            &credentials,
            Some(&token_a),
            Some(&json!({"token": 5})),
        )
        .await;
    assert_eq!((malformed.status, malformed.code()), (400, 2001));
    let other_party = json!({"token": "EMSP-TOKEN-B", "url": format!("{emsp_base}/versions"),
        "roles": [{"role": "EMSP", "country_code": "DE", "party_id": "XYZ",
                   "business_details": {"name": "Someone else"}}]});
    let refused = ocpi
        .call("POST", &credentials, Some(&token_a), Some(&other_party))
        .await;
    assert_eq!(refused.code(), 2001, "{:?}", refused.json);

    // The exchange: cms reads the eMSP's versions with token B and answers token C.
    let ours = json!({"token": "EMSP-TOKEN-B", "url": format!("{emsp_base}/versions"),
        "roles": [{"role": "EMSP", "country_code": "NL", "party_id": "EMP",
                   "business_details": {"name": "The eMSP"}}]});
    let registered = ocpi
        .call("POST", &credentials, Some(&token_a), Some(&ours))
        .await;
    assert_eq!(registered.code(), 1000, "{:?}", registered.json);
    let token_c = registered.json["data"]["token"]
        .as_str()
        .unwrap()
        .to_string();
    let role = &registered.json["data"]["roles"][0];
    assert_eq!(
        (role["role"].as_str(), role["party_id"].as_str()),
        (Some("CPO"), Some("CMS"))
    );
    assert_eq!(role["business_details"]["name"], "Charging Co");
    assert_ne!(token_c, token_a);
    assert_eq!(
        ocpi.get("/ocpi/versions", &token_a).await.status,
        401,
        "token A is spent"
    );
    let shown = ocpi.get(&credentials, &token_c).await;
    assert_eq!(shown.json["data"]["token"], token_c.as_str());
    let again = ocpi
        .call("POST", &credentials, Some(&token_c), Some(&ours))
        .await;
    assert_eq!(again.status, 405, "registered once");

    let connection = api.get_ok(&format!("{provider}/ocpi")).await;
    assert_eq!(connection["data"]["status"], "registered");
    assert_eq!(
        connection["data"]["versions_url"],
        format!("{emsp_base}/versions")
    );
    assert_eq!(
        connection["data"]["endpoints"][1]["identifier"],
        "locations"
    );
    assert!(
        !connection.to_string().contains("EMSP-TOKEN-B"),
        "no token shown: {connection}"
    );
    // Registered: no new token A until unregistered.
    api.expect(409, "POST", &format!("{provider}/ocpi/token"), None)
        .await;

    // Rotation: a new token for the eMSP, the old one spent.
    let rotated = ocpi
        .call("PUT", &credentials, Some(&token_c), Some(&ours))
        .await;
    assert_eq!(rotated.code(), 1000, "{:?}", rotated.json);
    let token_c2 = rotated.json["data"]["token"].as_str().unwrap().to_string();
    assert_eq!(ocpi.get("/ocpi/versions", &token_c).await.status, 401);
    let bad_put = ocpi
        .call(
            "PUT",
            &credentials,
            Some(&token_c2),
            Some(&json!(["not", "credentials"])),
        )
        .await;
    assert_eq!((bad_put.status, bad_put.code()), (400, 2001));

    // Unregistered: the token opens nothing, the connection is gone.
    let gone = ocpi
        .call("DELETE", &credentials, Some(&token_c2), None)
        .await;
    assert_eq!(gone.code(), 1000);
    assert_eq!(ocpi.get("/ocpi/versions", &token_c2).await.status, 401);
    api.expect(404, "GET", &format!("{provider}/ocpi"), None)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cms_registers_with_an_emsp_and_tells_it_when_it_unregisters() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let (api, provider) = connected_team(&cms).await;
    let (emsp_base, seen) = emsp("EMSP-TOKEN-A").await;
    let register = format!("{provider}/ocpi/register");

    let errors = api
        .expect_invalid("POST", &register, Some(&json!({"versions_url": "ftp://x"})))
        .await;
    assert!(
        errors["versions_url"].is_array() && errors["token"].is_array(),
        "{errors}"
    );
    // A token the eMSP does not know: 422 saying why, nothing kept.
    let wrong = json!({"versions_url": format!("{emsp_base}/versions"), "token": "WRONG"});
    let errors = api.expect_invalid("POST", &register, Some(&wrong)).await;
    assert!(
        errors["versions_url"][0].as_str().unwrap().contains("401"),
        "{errors}"
    );
    api.expect(404, "GET", &format!("{provider}/ocpi"), None)
        .await;

    let right = json!({"versions_url": format!("{emsp_base}/versions"), "token": "EMSP-TOKEN-A"});
    let connection = api.expect(200, "POST", &register, Some(&right)).await;
    assert_eq!(connection["data"]["status"], "registered", "{connection}");
    assert_eq!(connection["data"]["roles"][0]["party_id"], "EMP");
    {
        let seen = seen.lock().unwrap();
        let posted = seen.posted.as_ref().expect("cms posted its credentials");
        assert_eq!(posted["roles"][0]["role"], "CPO");
        assert_eq!(posted["url"], cms.http_url("/ocpi/versions"));
        assert_eq!(
            seen.cms_versions_answered,
            Some(200),
            "cms answers its own token B"
        );
    }

    api.expect(200, "DELETE", &format!("{provider}/ocpi"), None)
        .await;
    let deleted_with = seen.lock().unwrap().deleted_with.clone();
    assert_eq!(
        deleted_with,
        Some(token_header("EMSP-TOKEN-C")),
        "cms calls with the eMSP's token C"
    );
    api.expect(404, "GET", &format!("{provider}/ocpi"), None)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emsp_on_a_private_address_is_refused_unless_allowed() {
    let cms = Cms::up().await;
    let (api, provider) = connected_team(&cms).await;
    let (emsp_base, _seen) = emsp("EMSP-TOKEN-A").await;
    let right = json!({"versions_url": format!("{emsp_base}/versions"), "token": "EMSP-TOKEN-A"});
    let errors = api
        .expect_invalid("POST", &format!("{provider}/ocpi/register"), Some(&right))
        .await;
    assert!(
        errors["versions_url"][0]
            .as_str()
            .unwrap()
            .contains("is not an https URL"),
        "{errors}"
    );
}
