//! Sites over the REST API: create, list, show, update (endpoint 6) and delete, who may do
//! which, and the v2 list of a site's connectors (endpoint 10).

use crate::support::rest::{create_site, site_body, sorted_keys};
use crate::support::{Api, Charger, assert_record_time, eventually, on_both_stores};
use serde_json::{Value, json};

/// Every field of the reference's site resource, with its type.
fn assert_site_shape(site: &Value) {
    assert_eq!(
        sorted_keys(site),
        [
            "address",
            "authorization",
            "capabilities",
            "chargers_count",
            "city",
            "country",
            "created_at",
            "house_number",
            "house_number_addition",
            "id",
            "local_authorization_list",
            "name",
            "permissions",
            "postal_code",
            "show_prices",
            "smart_charging",
            "street",
            "tariff_uuid",
            "time_zone",
            "updated_at",
            "uuid"
        ]
    );
    let uuid = site["uuid"].as_str().unwrap_or("");
    let groups: Vec<usize> = uuid.split('-').map(str::len).collect();
    assert_eq!(groups, [8, 4, 4, 4, 12], "a uuid: {site}");
    assert!(
        site["id"].is_i64() && site["chargers_count"].is_i64(),
        "{site}"
    );
    assert!(site["house_number"].is_number(), "{site}");
    for field in [
        "name",
        "street",
        "postal_code",
        "city",
        "country",
        "smart_charging",
    ] {
        assert!(site[field].is_string(), "{field}: {site}");
    }
    for field in ["address", "house_number_addition"] {
        assert!(
            site[field].is_string() || site[field].is_null(),
            "{field}: {site}"
        );
    }
    assert!(
        site["country"]
            .as_str()
            .is_some_and(|c| c.chars().count() <= 2)
    );
    assert_eq!(site["smart_charging"], "disabled");
    let capabilities = &site["capabilities"];
    assert!(capabilities["smart_charging"].is_boolean(), "{site}");
    for flag in ["dynamic", "peak_shaving", "solar"] {
        assert!(capabilities["load_management"][flag].is_boolean(), "{site}");
    }
    for flag in ["basic", "sensitive", "full"] {
        assert!(site["permissions"][flag].is_boolean(), "{site}");
    }
    assert_record_time(&site["created_at"], "created_at");
    assert_record_time(&site["updated_at"], "updated_at");
}

on_both_stores!(sites_are_created_listed_updated_and_deleted, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    let site = create_site(&api, "Depot").await;
    assert_site_shape(&site);
    assert_eq!(site["name"], "Depot");
    assert_eq!(site["house_number"], 12);
    assert_eq!(site["house_number_addition"], "A");
    assert_eq!(site["address"], "Stationsplein 12A, 1012 AB Amsterdam");
    assert_eq!(site["chargers_count"], 0);
    assert_eq!(
        site["permissions"],
        json!({"basic": true, "sensitive": true, "full": true})
    );
    let uuid = site["uuid"].as_str().unwrap().to_string();
    let path = format!("/api/v3/sites/{uuid}");

    let page = api.get_ok("/api/v3/sites").await;
    let listed = page["data"].as_array().expect("data");
    assert!(listed.iter().any(|s| s["uuid"] == uuid), "{page}");
    listed.iter().for_each(assert_site_shape);
    assert_eq!(page["meta"]["per_page"], 25);
    assert_eq!(page["meta"]["current_page"], 1);
    assert_eq!(page["links"]["first"], "/api/v3/sites?page=1");
    let invalid = api
        .expect_invalid("GET", "/api/v3/sites?page=0", None)
        .await;
    assert!(invalid.get("page").is_some(), "{invalid}");

    cms.add_charger_with("CP-SITE-1", &["--site", &uuid]).await;
    let shown = api.get_ok(&path).await["data"].clone();
    assert_site_shape(&shown);
    assert_eq!(shown["chargers_count"], 1);

    let changes = json!({"name": "Depot Noord", "house_number": 7, "house_number_addition": null});
    let updated = api.expect(200, "PUT", &path, Some(&changes)).await["data"].clone();
    assert_site_shape(&updated);
    assert_eq!(
        (
            &updated["name"],
            &updated["house_number"],
            &updated["house_number_addition"]
        ),
        (&json!("Depot Noord"), &json!(7), &Value::Null)
    );
    assert_eq!(updated["street"], "Stationsplein", "untouched fields stay");
    assert_eq!(updated["address"], "Stationsplein 7, 1012 AB Amsterdam");
    assert_eq!(api.get_ok(&path).await["data"]["name"], "Depot Noord");

    let refused = api.expect_invalid("DELETE", &path, None).await;
    assert!(
        refused.get("site").is_some(),
        "a site with chargers stays: {refused}"
    );
    let empty = create_site(&api, "Empty").await;
    let empty_path = format!("/api/v3/sites/{}", empty["uuid"].as_str().unwrap());
    assert_eq!(
        api.expect(200, "DELETE", &empty_path, None).await,
        json!({})
    );
    assert_eq!(api.get(&empty_path).await.status, 404);
});

on_both_stores!(
    new_sites_need_every_address_field_and_a_team_of_the_caller,
    |cms| {
        let api = Api::new(&cms, &cms.operator_token().await);
        for field in [
            "name",
            "street",
            "house_number",
            "postal_code",
            "city",
            "country",
        ] {
            let mut body = site_body("Depot");
            body.as_object_mut().unwrap().remove(field);
            let errors = api
                .expect_invalid("POST", "/api/v3/sites", Some(&body))
                .await;
            assert_eq!(
                errors.as_object().unwrap().keys().collect::<Vec<_>>(),
                [field],
                "without {field}: {errors}"
            );
        }
        let mut without_addition = site_body("Depot");
        without_addition
            .as_object_mut()
            .unwrap()
            .remove("house_number_addition");
        let site = api
            .expect(201, "POST", "/api/v3/sites", Some(&without_addition))
            .await;
        assert_eq!(site["data"]["house_number_addition"], Value::Null);

        // A team of the caller's own may own it; another customer's team may not.
        let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
        let guest_site = create_site(&guest, "Guest depot").await;
        let guest_team = guest
            .get_ok(&format!(
                "/api/v3/sites/{}/teams",
                guest_site["uuid"].as_str().unwrap()
            ))
            .await["data"][0]["uuid"]
            .clone();
        let mut body = site_body("Depot");
        body["team_uuid"] = guest_team.clone();
        let errors = api
            .expect_invalid("POST", "/api/v3/sites", Some(&body))
            .await;
        assert_eq!(
            errors["team_uuid"],
            json!(["The selected team uuid is invalid."])
        );
        let created = guest
            .expect(201, "POST", "/api/v3/sites", Some(&body))
            .await;
        assert_eq!(created["data"]["permissions"]["full"], true);
    }
);

on_both_stores!(site_updates_are_validated_one_rule_at_a_time, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    let site = create_site(&api, "Depot").await;
    let path = format!("/api/v3/sites/{}", site["uuid"].as_str().unwrap());
    let long = "x".repeat(256);
    let cases = [
        ("name", json!({"name": long})),
        ("street", json!({"street": long})),
        ("postal_code", json!({"postal_code": long})),
        ("city", json!({"city": long})),
        (
            "house_number_addition",
            json!({"house_number_addition": long}),
        ),
        ("house_number", json!({"house_number": -1})),
        ("house_number", json!({"house_number": "twelve"})),
        ("country", json!({"country": "NLD"})),
        ("country", json!({"country": 31})),
        ("name", json!({"name": 5})),
        ("street", json!({"street": ["Stationsplein"]})),
        ("postal_code", json!({"postal_code": true})),
        ("city", json!({"city": {"name": "Amsterdam"}})),
        ("house_number_addition", json!({"house_number_addition": 1})),
    ];
    for (field, body) in cases {
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        assert_eq!(
            errors.as_object().unwrap().keys().collect::<Vec<_>>(),
            [field],
            "{body}: {errors}"
        );
    }
    let errors = api
        .expect_invalid("PUT", &path, Some(&json!({"name": long})))
        .await;
    assert_eq!(
        errors["name"],
        json!(["The name field must not be greater than 255 characters."])
    );
    let errors = api
        .expect_invalid("PUT", &path, Some(&json!({"house_number": -1})))
        .await;
    assert_eq!(
        errors["house_number"],
        json!(["The house number field must be at least 0."])
    );
    // The limits themselves are fine.
    let at_limits = json!({"name": "x".repeat(255), "country": "BE", "house_number": 0});
    let updated = api.expect(200, "PUT", &path, Some(&at_limits)).await;
    assert_eq!(updated["data"]["country"], "BE");
});

on_both_stores!(sites_are_private_to_their_teams_and_scopes, |cms| {
    let operator = Api::new(&cms, &cms.operator_token().await);
    let site = create_site(&operator, "Depot").await;
    let path = format!("/api/v3/sites/{}", site["uuid"].as_str().unwrap());
    let not_found = json!({"message": "Site not found."});

    let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
    let listed = stranger.get_ok("/api/v3/sites").await;
    assert_eq!(listed["data"], json!([]), "a stranger sees no sites");
    for (method, body) in [
        ("GET", None),
        ("PUT", Some(json!({"name": "Mine"}))),
        ("DELETE", None),
    ] {
        let answer = stranger.send(method, &path, body.as_ref()).await;
        assert_eq!((answer.status, &answer.json), (404, &not_found), "{method}");
    }
    let unknown = "/api/v3/sites/00000000-0000-0000-0000-000000000000";
    assert_eq!(operator.get(unknown).await.status, 404);
    assert_eq!(operator.get("/api/v3/sites/not-a-uuid").await.status, 404);

    for answer in [
        operator.get_authorized("/api/v3/sites", None).await,
        operator
            .send_authorized("PUT", &path, Some(&json!({})), None)
            .await,
        operator
            .send_authorized("POST", "/api/v3/sites", Some(&site_body("X")), None)
            .await,
    ] {
        assert_eq!(answer.status, 401, "{}", answer.body);
        assert_eq!(answer.json, json!({"message": "Unauthenticated."}));
    }

    let forbidden = json!({"message": "This action is unauthorized."});
    let read_only = Api::new(
        &cms,
        &cms.create_token("reader@example.com", Some("sites:read"))
            .await,
    );
    let chargers_only = Api::new(
        &cms,
        &cms.create_token("chargers@example.com", Some("chargers:read"))
            .await,
    );
    for (api, method, path, body) in [
        (&chargers_only, "GET", "/api/v3/sites", None),
        (&chargers_only, "GET", path.as_str(), None),
        (&read_only, "POST", "/api/v3/sites", Some(site_body("X"))),
        (&read_only, "PUT", path.as_str(), Some(json!({"name": "X"}))),
        (&read_only, "DELETE", path.as_str(), None),
    ] {
        let answer = api.send(method, path, body.as_ref()).await;
        assert_eq!(
            (answer.status, &answer.json),
            (403, &forbidden),
            "{method} {path}"
        );
    }
    assert_eq!(read_only.get("/api/v3/sites").await.status, 200);
});

on_both_stores!(a_team_lists_the_connectors_of_its_site_over_v2, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    let site = create_site(&api, "Depot").await;
    let site_uuid = site["uuid"].as_str().unwrap();
    cms.add_charger_with("CP-V2-1", &["--site", site_uuid])
        .await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-V2-1", "1.0.0").await;
    for connector in [1, 2] {
        let status =
            json!({"connectorId": connector, "errorCode": "NoError", "status": "Available"});
        charger.call_result("StatusNotification", status).await;
    }
    let teams = api
        .get_ok(&format!("/api/v3/sites/{site_uuid}/teams"))
        .await;
    let team_id = teams["data"][0]["id"]
        .as_i64()
        .expect("the owner team's id");
    let site_id = site["id"].as_i64().unwrap();
    let path = format!("/api/v2/teams/{team_id}/sites/{site_id}/connectors");

    let connectors = eventually("both connectors listed", async || {
        let answer = api.get_ok(&path).await;
        match answer["data"].as_array() {
            Some(list) if list.len() == 2 => Ok(list.clone()),
            _ => Err(answer.to_string()),
        }
    })
    .await;
    for (n, connector) in connectors.iter().enumerate() {
        assert_eq!(
            sorted_keys(connector),
            [
                "charger_id",
                "connector_id",
                "created_at",
                "error",
                "error_info",
                "id",
                "max_amperage",
                "status",
                "updated_at"
            ]
        );
        assert_eq!(connector["connector_id"], n as i64 + 1);
        assert_eq!(connector["status"], "Available");
        assert_eq!(connector["error"], "NoError");
        assert!(connector["id"].is_i64() && connector["charger_id"].is_i64());
        assert_record_time(&connector["created_at"], "created_at");
    }

    // Another customer's team, a team that does not reach the site, and ids that are not
    // numbers are all unknown.
    let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
    assert_eq!(stranger.get(&path).await.status, 404);
    let other_site = create_site(&api, "Other").await;
    let other_id = other_site["id"].as_i64().unwrap();
    let stranger_site = create_site(&stranger, "Stranger's").await;
    let stranger_team = stranger
        .get_ok(&format!(
            "/api/v3/sites/{}/teams",
            stranger_site["uuid"].as_str().unwrap()
        ))
        .await["data"][0]["id"]
        .as_i64()
        .unwrap();
    for path in [
        format!("/api/v2/teams/{stranger_team}/sites/{site_id}/connectors"),
        format!(
            "/api/v2/teams/{team_id}/sites/{}/connectors",
            stranger_site["id"]
        ),
        format!("/api/v2/teams/x/sites/{site_id}/connectors"),
        format!("/api/v2/teams/{team_id}/sites/x/connectors"),
    ] {
        assert_eq!(api.get(&path).await.status, 404, "{path}");
    }
    let empty = api
        .get_ok(&format!(
            "/api/v2/teams/{team_id}/sites/{other_id}/connectors"
        ))
        .await;
    assert_eq!(empty["data"], json!([]), "{empty}");
    assert_eq!(
        empty["meta"]["per_page"], 25,
        "paginated like every list: {empty}"
    );
    let no_scope = Api::new(
        &cms,
        &cms.create_token("sites@example.com", Some("sites:read"))
            .await,
    );
    assert_eq!(no_scope.get(&path).await.status, 403);
});

on_both_stores!(a_site_s_authorization_is_set_on_create_and_update, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    let open = create_site(&api, "Open").await;
    assert_eq!(
        (&open["authorization"], &open["local_authorization_list"]),
        (&json!("open"), &json!(false)),
        "a new site is open"
    );

    let mut body = site_body("Closed");
    body["authorization"] = json!("id_tags");
    body["local_authorization_list"] = json!(true);
    let closed = api.expect(201, "POST", "/api/v3/sites", Some(&body)).await["data"].clone();
    assert_site_shape(&closed);
    assert_eq!(closed["authorization"], "id_tags");
    assert_eq!(closed["local_authorization_list"], true);
    let path = format!("/api/v3/sites/{}", closed["uuid"].as_str().unwrap());
    assert_eq!(api.get_ok(&path).await["data"]["authorization"], "id_tags");

    let reopened = api
        .expect(200, "PUT", &path, Some(&json!({"authorization": "open"})))
        .await["data"]
        .clone();
    assert_eq!(reopened["authorization"], "open");
    assert_eq!(
        reopened["local_authorization_list"], true,
        "what the update leaves out stays"
    );
    assert_eq!(reopened["name"], "Closed");
    let unlisted = api
        .expect(
            200,
            "PUT",
            &path,
            Some(&json!({"local_authorization_list": false})),
        )
        .await["data"]
        .clone();
    assert_eq!(
        (
            &unlisted["authorization"],
            &unlisted["local_authorization_list"]
        ),
        (&json!("open"), &json!(false))
    );

    let nonsense = [
        (
            json!({"authorization": "closed"}),
            json!({"authorization": ["The selected authorization is invalid."]}),
        ),
        (
            json!({"authorization": null}),
            json!({"authorization": ["The authorization field must not be null."]}),
        ),
        (
            json!({"local_authorization_list": "maybe"}),
            json!({"local_authorization_list": [
                "The local authorization list field must be true or false."
            ]}),
        ),
    ];
    for (changes, expected) in nonsense {
        let errors = api.expect_invalid("PUT", &path, Some(&changes)).await;
        assert_eq!(errors, expected, "{changes}");
        let mut new = site_body("Nonsense");
        new.as_object_mut()
            .unwrap()
            .extend(changes.as_object().unwrap().clone());
        let errors = api
            .expect_invalid("POST", "/api/v3/sites", Some(&new))
            .await;
        assert_eq!(errors, expected, "create with {changes}");
    }
    let shown = api.get_ok(&path).await["data"].clone();
    assert_eq!(
        (&shown["authorization"], &shown["local_authorization_list"]),
        (&json!("open"), &json!(false)),
        "refused updates changed nothing"
    );
});
