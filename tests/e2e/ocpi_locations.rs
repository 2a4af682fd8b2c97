//! OCPI locations and tariffs (docs/ocpi.md "Locations and tariffs"), end to end: a site's
//! roaming settings through the REST API, its Location, EVSEs and tariff pulled by the party
//! of the provider it is published to and by no other, the EVSE's status following a
//! charger's StatusNotification, and the pushes a publication leaves in the outbox. The eMSP
//! here is a small axum app of the test's.

use crate::support::ocpi::Ocpi;
use crate::support::rest::{create_tariff, operators_site, site_body, team_of_type, uuid_of};
use crate::support::{Api, Charger, Cms, eventually};
use axum::Json;
use axum::extract::State;
use axum::routing::{get, post, put};
use serde_json::{Value, json};

fn envelope(data: Value) -> Json<Value> {
    Json(json!({"data": data, "status_code": 1000, "timestamp": "2026-11-29T10:00:00Z"}))
}

/// An eMSP on loopback that takes any token: its versions, its 2.2.1 endpoints (credentials,
/// and locations and tariffs as a RECEIVER), and a success for any push.
async fn emsp() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let versions = |State(base): State<String>| async move {
        envelope(json!([{"version": "2.2.1", "url": format!("{base}/2.2.1")}]))
    };
    let details = |State(base): State<String>| async move {
        let url = |m: &str| format!("{base}/{m}");
        envelope(json!({"version": "2.2.1", "endpoints": [
            {"identifier": "credentials", "role": "RECEIVER", "url": url("credentials")},
            {"identifier": "locations", "role": "RECEIVER", "url": url("locations")},
            {"identifier": "tariffs", "role": "RECEIVER", "url": url("tariffs")},
        ]}))
    };
    let taken = || async { envelope(Value::Null) };
    let app = axum::Router::new()
        .route("/versions", get(versions))
        .route("/2.2.1", get(details))
        .route("/credentials", post(taken))
        .route("/locations/{*rest}", put(taken).patch(taken))
        .route("/tariffs/{*rest}", put(taken))
        .with_state(base.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// A provider `code` of `team`, its eMSP registered with cms: (provider uuid, token C).
async fn registered_provider(cms: &Cms, api: &Api, team: &str, code: &str) -> (String, String) {
    let providers = format!("/api/v3/teams/{team}/providers");
    let body = json!({"name": code, "country_code": "NL", "party_id": code});
    let provider = uuid_of(&api.expect(201, "POST", &providers, Some(&body)).await["data"]);
    let issued = api
        .expect(
            201,
            "POST",
            &format!("{providers}/{provider}/ocpi/token"),
            None,
        )
        .await;
    let token_a = issued["data"]["token"].as_str().unwrap().to_string();
    let credentials = json!({"token": format!("B-{code}"),
        "url": format!("{}/versions", emsp().await),
        "roles": [{"role": "EMSP", "country_code": "NL", "party_id": code,
                   "business_details": {"name": code}}]});
    let ocpi = Ocpi::at(&cms.http_url(""));
    let answer = ocpi
        .call(
            "POST",
            "/ocpi/2.2.1/credentials",
            Some(&token_a),
            Some(&credentials),
        )
        .await;
    assert_eq!(answer.code(), 1000, "{:?}", answer.json);
    let token_c = answer.json["data"]["token"].as_str().unwrap().to_string();
    (provider, token_c)
}

/// cms with the operators' team as CPO NL/CMS, its providers EMP and OTH registered, and the
/// charger `identity` in the operators' site: (api, team, site, [EMP, OTH] as (uuid, token)).
async fn roaming_cms(cms: &Cms, identity: &str) -> (Api, String, String, [(String, String); 2]) {
    cms.add_charger(identity).await;
    let api = Api::new(cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let identity_body = json!({"country_code": "NL", "party_id": "CMS", "name": "Charging Co"});
    api.expect(
        200,
        "PUT",
        &format!("/api/v3/teams/{team}/ocpi"),
        Some(&identity_body),
    )
    .await;
    let emp = registered_provider(cms, &api, &team, "EMP").await;
    let oth = registered_provider(cms, &api, &team, "OTH").await;
    // The operators' default site has no address until one is given: a Location needs one.
    let site = operators_site(&api).await;
    let address = site_body("Depot");
    api.expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&address))
        .await;
    (api, team, site, [emp, oth])
}

fn roaming(providers: &[&str]) -> Value {
    json!({"latitude": "52.37403", "longitude": "4.88969", "parking_type": "ON_STREET",
           "facilities": ["CAFE"], "provider_uuids": providers})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_site_published_to_a_provider_is_pulled_by_its_party_and_by_no_other() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let (api, team, site, [(emp, emp_token), (_oth, oth_token)]) =
        roaming_cms(&cms, "CP-LOC-1").await;
    let ocpi = Ocpi::at(&cms.http_url(""));
    let settings = format!("/api/v3/sites/{site}/roaming");

    // Private until published: no settings, no party sees it.
    let before = api.get_ok(&settings).await;
    assert_eq!(before["data"]["provider_uuids"], json!([]), "{before}");
    assert!(before["data"]["latitude"].is_null(), "{before}");
    let errors = api.expect_invalid("PUT", &settings, Some(&json!({}))).await;
    for field in ["latitude", "longitude", "provider_uuids"] {
        assert!(errors[field].is_array(), "{field}: {errors}");
    }
    let bad = json!({"latitude": "52.37", "longitude": "4,88969", "parking_type": "BEACH",
        "facilities": ["SPA"], "opening_times": {"twentyfourseven": false},
        "provider_uuids": ["00000000-0000-0000-0000-000000000000"]});
    let errors = api.expect_invalid("PUT", &settings, Some(&bad)).await;
    for field in [
        "latitude",
        "longitude",
        "parking_type",
        "facilities.0",
        "opening_times.regular_hours",
        "provider_uuids.0",
    ] {
        assert!(errors[field].is_array(), "{field}: {errors}");
    }
    // Lists are bounded: providers (each is looked up), facilities, opening periods.
    let many: Vec<String> = (0..101)
        .map(|i| format!("00000000-0000-4000-8000-{i:012}"))
        .collect();
    let period = json!({"weekday": 1, "period_begin": "08:00", "period_end": "18:00"});
    let too_long = json!({"latitude": "52.37403", "longitude": "4.88969",
        "facilities": vec!["CAFE"; 21], "provider_uuids": many,
        "opening_times": {"twentyfourseven": false, "regular_hours": vec![period; 101]}});
    let errors = api.expect_invalid("PUT", &settings, Some(&too_long)).await;
    for field in [
        "provider_uuids",
        "facilities",
        "opening_times.regular_hours",
    ] {
        let said = errors[field][0].as_str().unwrap_or_default();
        assert!(
            said.contains("at most") || said.contains("more than"),
            "{field}: {errors}"
        );
    }
    api.expect(
        404,
        "PUT",
        "/api/v3/sites/00000000-0000-0000-0000-000000000000/roaming",
        Some(&roaming(&[])),
    )
    .await;

    // Two sites with a tariff, published to EMP.
    let tariff = create_tariff(
        &api,
        &team,
        &json!({"name": "Standard", "currency": "EUR", "elements": [
            {"price_components": [{"type": "ENERGY", "price": "0.30", "vat": 21, "step_size": 1}]}]}),
    )
    .await;
    let mut second = site_body("Second");
    second["team_uuid"] = json!(team);
    let second = uuid_of(
        &api.expect(201, "POST", "/api/v3/sites", Some(&second))
            .await["data"],
    );
    for uuid in [&site, &second] {
        let body = json!({"tariff_uuid": tariff});
        api.expect(200, "PUT", &format!("/api/v3/sites/{uuid}"), Some(&body))
            .await;
    }
    let saved = api
        .expect(200, "PUT", &settings, Some(&roaming(&[&emp])))
        .await;
    assert_eq!(saved["data"]["provider_uuids"], json!([emp]), "{saved}");
    assert_eq!(saved["data"]["latitude"], "52.37403");
    api.expect(
        200,
        "PUT",
        &format!("/api/v3/sites/{second}/roaming"),
        Some(&roaming(&[&emp])),
    )
    .await;

    // EMP pulls both, a page at a time.
    let first_page = ocpi.get("/ocpi/2.2.1/locations?limit=1", &emp_token).await;
    assert_eq!(first_page.code(), 1000, "{:?}", first_page.json);
    assert_eq!(first_page.header("x-total-count").as_deref(), Some("2"));
    let link = first_page.header("link").expect("a Link to the next page");
    let next = link.trim_start_matches('<').split('>').next().unwrap();
    let second_page = ocpi.get(next, &emp_token).await;
    let ids: Vec<Value> = [&first_page, &second_page]
        .iter()
        .map(|page| page.json["data"][0]["id"].clone())
        .collect();
    assert_eq!(ids, [json!(site), json!(second)]);
    assert!(second_page.header("link").is_none());
    let location = &first_page.json["data"][0];
    assert_eq!(
        (
            location["country_code"].as_str(),
            location["party_id"].as_str()
        ),
        (Some("NL"), Some("CMS"))
    );
    assert_eq!(location["country"], "NLD");
    assert_eq!(location["coordinates"]["latitude"], "52.37403");
    assert_eq!(location["opening_times"], json!({"twentyfourseven": true}));
    let evse = &location["evses"][0];
    assert_eq!(evse["evse_id"], "NL*CMS*ECPLOC1");
    assert_eq!(evse["connectors"][0]["tariff_ids"], json!([tariff]));
    let later = "2999-01-01T00:00:00Z";
    let none = ocpi
        .get(
            &format!("/ocpi/2.2.1/locations?date_from={later}"),
            &emp_token,
        )
        .await;
    assert_eq!(none.json["data"], json!([]));
    assert_eq!(none.header("x-total-count").as_deref(), Some("0"));
    let bad_date = ocpi
        .get("/ocpi/2.2.1/locations?date_from=soon", &emp_token)
        .await;
    assert_eq!((bad_date.status, bad_date.code()), (400, 2001));

    // One Location, EVSE and connector of it.
    let one = format!("/ocpi/2.2.1/locations/{site}");
    assert_eq!(
        ocpi.get(&one, &emp_token).await.json["data"]["id"],
        site.as_str()
    );
    let uid = evse["uid"].as_str().unwrap();
    let got = ocpi.get(&format!("{one}/{uid}"), &emp_token).await;
    assert_eq!(got.json["data"]["uid"], uid);
    let connector = ocpi.get(&format!("{one}/{uid}/1"), &emp_token).await;
    assert_eq!(connector.json["data"]["id"], "1", "{:?}", connector.json);
    let unknown = ocpi.get(&format!("{one}/nope"), &emp_token).await;
    assert_eq!((unknown.status, unknown.code()), (404, 2000));
    let unknown = ocpi.get(&format!("{one}/{uid}/9"), &emp_token).await;
    assert_eq!((unknown.status, unknown.code()), (404, 2000));

    // OTH sees nothing of it.
    let others = ocpi.get("/ocpi/2.2.1/locations", &oth_token).await;
    assert_eq!(others.json["data"], json!([]), "{:?}", others.json);
    for path in [
        one.clone(),
        format!("{one}/{uid}"),
        format!("{one}/{uid}/1"),
    ] {
        let hidden = ocpi.get(&path, &oth_token).await;
        assert_eq!((hidden.status, hidden.code()), (404, 2003), "{path}");
    }
    let no_tariffs = ocpi.get("/ocpi/2.2.1/tariffs", &oth_token).await;
    assert_eq!(no_tariffs.json["data"], json!([]));

    // EMP's tariffs: the one pricing its drivers at both sites, once.
    let tariffs = ocpi.get("/ocpi/2.2.1/tariffs", &emp_token).await;
    assert_eq!(tariffs.header("x-total-count").as_deref(), Some("1"));
    let pulled = &tariffs.json["data"][0];
    assert_eq!(pulled["id"], tariff.as_str());
    assert_eq!(pulled["party_id"], "CMS");
    assert_eq!(
        pulled["elements"][0]["price_components"][0]["price"].as_f64(),
        Some(0.3)
    );

    // A site without a country as ISO writes it is not published.
    let mut nowhere = site_body("Nowhere");
    nowhere["team_uuid"] = json!(team);
    nowhere["country"] = json!("ZZ");
    let nowhere = uuid_of(
        &api.expect(201, "POST", "/api/v3/sites", Some(&nowhere))
            .await["data"],
    );
    let errors = api
        .expect_invalid(
            "PUT",
            &format!("/api/v3/sites/{nowhere}/roaming"),
            Some(&roaming(&[&emp])),
        )
        .await;
    assert!(
        errors["provider_uuids"][0].as_str().unwrap().contains("ZZ"),
        "{errors}"
    );

    // Edits are pushed: the site renamed, the tariff's next version.
    let renamed = json!({"name": "Renamed"});
    api.expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&renamed))
        .await;
    let dearer = json!({"name": "Standard", "currency": "EUR", "elements": [
        {"price_components": [{"type": "ENERGY", "price": "0.35", "vat": 21, "step_size": 1}]}]});
    api.expect(
        200,
        "PUT",
        &format!("/api/v3/teams/{team}/tariffs/{tariff}"),
        Some(&dearer),
    )
    .await;

    // The publication left its pushes in the outbox; unpublishing, the EVSE REMOVED.
    api.expect(200, "PUT", &settings, Some(&roaming(&[]))).await;
    let store = cms.open_store().await;
    let provider = store.provider_by_uuid(&emp).await.unwrap().unwrap();
    let pushed = store
        .ocpi_object_pushes(provider.id, &format!("location:{site}"))
        .await
        .unwrap();
    let methods: Vec<(&str, &str)> = (pushed.iter())
        .map(|p| (p.method.as_str(), p.path.as_str()))
        .collect();
    let location_path = format!("/NL/CMS/{site}");
    let evse_path = format!("/NL/CMS/{site}/{uid}");
    assert_eq!(
        methods,
        [
            ("PUT", location_path.as_str()),
            ("PUT", location_path.as_str()),
            ("PATCH", evse_path.as_str())
        ],
        "{pushed:?}"
    );
    let body = |push: &cms_store::ocpi::pushes::NewPush| -> Value {
        serde_json::from_str(push.body.as_deref().unwrap()).unwrap()
    };
    assert_eq!(body(&pushed[0])["name"], "Depot");
    assert_eq!(body(&pushed[1])["name"], "Renamed");
    assert_eq!(body(&pushed[2])["status"], "REMOVED");
    let tariff_pushes = store
        .ocpi_object_pushes(provider.id, &format!("tariff:{tariff}"))
        .await
        .unwrap();
    // Pushed with each site's publication and with the site's edit (it may have been the
    // site's tariff that changed), then its next version once.
    assert_eq!(tariff_pushes.len(), 4, "{tariff_pushes:?}");
    let last = body(&tariff_pushes[3]);
    assert_eq!(
        last["elements"][0]["price_components"][0]["price"].as_f64(),
        Some(0.35)
    );
    assert_eq!(tariff_pushes[3].path, format!("/NL/CMS/{tariff}"));
    let gone = ocpi.get(&one, &emp_token).await;
    assert_eq!((gone.status, gone.code()), (404, 2003));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_evse_status_follows_the_chargers_status_notifications() {
    let cms = Cms::up_with(&["--ocpi-allow-private"]).await;
    let (api, _team, site, [(emp, emp_token), _]) = roaming_cms(&cms, "CP-LOC-2").await;
    let ocpi = Ocpi::at(&cms.http_url(""));
    let settings = format!("/api/v3/sites/{site}/roaming");
    api.expect(200, "PUT", &settings, Some(&roaming(&[&emp])))
        .await;
    let location = ocpi
        .get(&format!("/ocpi/2.2.1/locations/{site}"), &emp_token)
        .await;
    let evse = &location.json["data"]["evses"][0];
    assert_eq!(evse["status"], "PLANNED", "never connected: {evse}");
    let evse_path = format!(
        "/ocpi/2.2.1/locations/{site}/{}",
        evse["uid"].as_str().unwrap()
    );

    let mut charger = Charger::connect_and_boot(&cms, "CP-LOC-2", "1.0.0").await;
    let charging = json!({"connectorId": 1, "errorCode": "NoError", "status": "Charging"});
    charger.call_result("StatusNotification", charging).await;
    let seen = eventually("the EVSE CHARGING", async || {
        let evse = ocpi.get(&evse_path, &emp_token).await.json;
        match evse["data"]["status"] == "CHARGING" {
            true => Ok(evse),
            false => Err(evse.to_string()),
        }
    })
    .await;
    assert_eq!(seen["data"]["connectors"][0]["id"], "1");
    let faulted = json!({"connectorId": 1, "errorCode": "GroundFailure", "status": "Faulted"});
    charger.call_result("StatusNotification", faulted).await;
    eventually("the EVSE OUTOFORDER", async || {
        let evse = ocpi.get(&evse_path, &emp_token).await.json;
        match evse["data"]["status"] == "OUTOFORDER" {
            true => Ok(()),
            false => Err(evse.to_string()),
        }
    })
    .await;
    charger.close().await;
    eventually("the EVSE UNKNOWN once the charger is gone", async || {
        let evse = ocpi.get(&evse_path, &emp_token).await.json;
        match evse["data"]["status"] == "UNKNOWN" {
            true => Ok(()),
            false => Err(evse.to_string()),
        }
    })
    .await;
}
