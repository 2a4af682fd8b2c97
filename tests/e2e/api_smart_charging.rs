//! Sites > Smart Charging over the REST API: a site's settings (their defaults, what a PUT
//! keeps, every rule it checks), the site resource following the mode, the status endpoint,
//! and who may read and change them.

use crate::support::rest::{create_site, invite_guest, team_of_type, uuid_of};
use crate::support::{Api, Cms, on_both_stores};
use serde_json::{Value, json};

fn settings_path(site: &str) -> String {
    format!("/api/v3/sites/{site}/smart-charging")
}

fn status_path(site: &str) -> String {
    format!("/api/v3/sites/{site}/smart-charging/status")
}

/// Registers a charger on the site over the API; returns its uuid and numeric id.
async fn add_charger(api: &Api, site: &str, identity: &str) -> (String, i64) {
    let path = format!("/api/v3/sites/{site}/chargers");
    let body = json!({"identity": identity});
    let created = api.expect(201, "POST", &path, Some(&body)).await;
    let id = created["data"]["id"].as_i64().expect("an integer id");
    (uuid_of(&created["data"]), id)
}

/// Attaches a CT meter to a charger for the caller's personal team (the owner of the sites
/// `create_site` makes); returns its uuid.
async fn add_ct_meter(api: &Api, charger_id: i64) -> String {
    let team = team_of_type(api, "personal").await["id"].clone();
    let path = format!("/api/v2/teams/{team}/meters");
    let body = json!({"type": "ct_meter", "charger_id": charger_id});
    uuid_of(&api.expect(201, "POST", &path, Some(&body)).await["data"])
}

/// The site's `smart_charging` and its two capability flags.
async fn site_flags(api: &Api, site: &str) -> (Value, Value, Value) {
    let shown = api.get_ok(&format!("/api/v3/sites/{site}")).await["data"].clone();
    let capabilities = &shown["capabilities"];
    (
        shown["smart_charging"].clone(),
        capabilities["smart_charging"].clone(),
        capabilities["load_management"]["dynamic"].clone(),
    )
}

on_both_stores!(settings_are_saved_kept_and_shown_on_the_site, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    let site = uuid_of(&create_site(&api, "Depot").await);
    let path = settings_path(&site);
    let defaults = json!({
        "mode": "disabled", "grid_limit_amps": null, "meter_uuid": null, "strategy": "equal",
        "min_amps": 6.0, "safety_margin_amps": 0.0, "fail_safe_amps": 6.0,
        "meter_timeout_seconds": 60, "priorities": {}, "updated_at": null
    });
    assert_eq!(api.get_ok(&path).await, json!({"data": defaults}));
    let fresh = api.get_ok(&status_path(&site)).await["data"].clone();
    assert_eq!(
        fresh,
        json!({
            "mode": "disabled", "grid_limit_amps": null, "state": "disabled",
            "computed_at": null, "meter": null, "base_load_amps": null, "available_amps": null,
            "allocated_amps": null, "headroom_amps": null, "fail_safe_since": null,
            "connectors": []
        })
    );
    let flags = (json!("disabled"), json!(false), json!(false));
    assert_eq!(site_flags(&api, &site).await, flags);

    let body = json!({"mode": "static", "grid_limit_amps": 32.5, "safety_margin_amps": 1.5});
    let saved = api.expect(200, "PUT", &path, Some(&body)).await["data"].clone();
    assert_eq!(api.get_ok(&path).await["data"], saved);
    let mut expected = defaults.clone();
    expected["mode"] = json!("static");
    expected["grid_limit_amps"] = json!(32.5);
    expected["safety_margin_amps"] = json!(1.5);
    expected["updated_at"] = saved["updated_at"].clone();
    assert_eq!(saved, expected);
    crate::support::assert_record_time(&saved["updated_at"], "updated_at");
    let flags = (json!("static"), json!(true), json!(false));
    assert_eq!(site_flags(&api, &site).await, flags);
    let status = api.get_ok(&status_path(&site)).await["data"].clone();
    assert_eq!(
        (&status["mode"], &status["state"]),
        (&json!("static"), &json!("idle"))
    );
    assert_eq!(
        (&status["grid_limit_amps"], &status["connectors"]),
        (&json!(32.5), &json!([]))
    );

    // Dynamic, with the site's own CT meter and priorities; fields left out stay.
    let (first, first_id) = add_charger(&api, &site, "CP-SC-1").await;
    let (second, _) = add_charger(&api, &site, "CP-SC-2").await;
    let meter = add_ct_meter(&api, first_id).await;
    let body = json!({
        "mode": "dynamic", "meter_uuid": meter, "strategy": "priority", "min_amps": 8,
        "fail_safe_amps": 0, "meter_timeout_seconds": 3600,
        "priorities": {first.clone(): 100, second.clone(): 0}
    });
    let saved = api.expect(200, "PUT", &path, Some(&body)).await["data"].clone();
    expected["mode"] = json!("dynamic");
    expected["meter_uuid"] = json!(meter);
    expected["strategy"] = json!("priority");
    expected["min_amps"] = json!(8.0);
    expected["fail_safe_amps"] = json!(0.0);
    expected["meter_timeout_seconds"] = json!(3600);
    expected["priorities"] = json!({first.clone(): 100, second.clone(): 0});
    expected["updated_at"] = saved["updated_at"].clone();
    assert_eq!(saved, expected);
    let flags = (json!("dynamic"), json!(true), json!(true));
    assert_eq!(site_flags(&api, &site).await, flags);
    let status = api.get_ok(&status_path(&site)).await["data"].clone();
    // The meter has read nothing: the balancer may already hold the site at the fail-safe.
    assert!(
        ["idle", "fail_safe"].contains(&status["state"].as_str().unwrap_or("")),
        "{status}"
    );

    // Only the mode: the rest is kept; `null` clears a nullable field, `{}` the priorities.
    let saved = api
        .expect(200, "PUT", &path, Some(&json!({"mode": "disabled"})))
        .await;
    expected["mode"] = json!("disabled");
    expected["updated_at"] = saved["data"]["updated_at"].clone();
    assert_eq!(saved["data"], expected);
    let flags = (json!("disabled"), json!(false), json!(false));
    assert_eq!(site_flags(&api, &site).await, flags);
    let body = json!({"mode": "disabled", "grid_limit_amps": null, "meter_uuid": null,
        "priorities": {}});
    let cleared = api.expect(200, "PUT", &path, Some(&body)).await["data"].clone();
    let nulls = (
        &cleared["grid_limit_amps"],
        &cleared["meter_uuid"],
        &cleared["priorities"],
    );
    assert_eq!(nulls, (&Value::Null, &Value::Null, &json!({})));
    let status = api.get_ok(&status_path(&site)).await["data"].clone();
    assert_eq!(status["state"], "disabled");
});

/// A body that must be refused with a failure of `field`.
fn refused(body: Value, field: &str) -> (Value, String) {
    (body, field.to_string())
}

on_both_stores!(
    settings_are_validated_and_only_the_owner_changes_them,
    |cms| {
        let token = cms.operator_token().await;
        let api = Api::new(&cms, &token);
        let site = uuid_of(&create_site(&api, "Depot").await);
        let path = settings_path(&site);
        let (charger, charger_id) = add_charger(&api, &site, "CP-SC-3").await;
        let (hidden, _) = add_charger(&api, &site, "CP-SC-4").await;
        let meter = add_ct_meter(&api, charger_id).await;
        let other_site = uuid_of(&create_site(&api, "Elsewhere").await);
        let (_, other_charger) = add_charger(&api, &other_site, "CP-SC-5").await;
        let other_meter = add_ct_meter(&api, other_charger).await;
        let defaults = api.get_ok(&path).await;

        let limit = |extra: Value| {
            let mut body = json!({"mode": "static", "grid_limit_amps": 32});
            body.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            body
        };
        let unknown = "00000000-0000-4000-8000-000000000000";
        let cases = [
            refused(json!({}), "mode"),
            refused(json!({"mode": null}), "mode"),
            refused(json!({"mode": "eco"}), "mode"),
            refused(json!({"mode": "static"}), "grid_limit_amps"),
            refused(
                json!({"mode": "static", "grid_limit_amps": null}),
                "grid_limit_amps",
            ),
            refused(
                json!({"mode": "static", "grid_limit_amps": 0}),
                "grid_limit_amps",
            ),
            refused(
                json!({"mode": "static", "grid_limit_amps": -5}),
                "grid_limit_amps",
            ),
            refused(
                json!({"mode": "static", "grid_limit_amps": 10000.5}),
                "grid_limit_amps",
            ),
            refused(
                json!({"mode": "static", "grid_limit_amps": "32"}),
                "grid_limit_amps",
            ),
            refused(
                json!({"mode": "static", "grid_limit_amps": true}),
                "grid_limit_amps",
            ),
            // No room for a connector at min_amps under the limit less the margin.
            refused(
                json!({"mode": "static", "grid_limit_amps": 0.0001, "fail_safe_amps": 0}),
                "grid_limit_amps",
            ),
            refused(
                json!({"mode": "static", "grid_limit_amps": 5, "fail_safe_amps": 0}),
                "grid_limit_amps",
            ),
            refused(
                json!({"mode": "dynamic", "grid_limit_amps": 5, "meter_uuid": meter,
                    "fail_safe_amps": 0}),
                "grid_limit_amps",
            ),
            refused(
                limit(json!({"min_amps": 30, "safety_margin_amps": 2.5, "fail_safe_amps": 0})),
                "grid_limit_amps",
            ),
            refused(limit(json!({"strategy": "fastest"})), "strategy"),
            refused(limit(json!({"strategy": null})), "strategy"),
            refused(limit(json!({"min_amps": 5.9})), "min_amps"),
            refused(
                limit(json!({"min_amps": 81, "fail_safe_amps": 0})),
                "min_amps",
            ),
            refused(limit(json!({"min_amps": null})), "min_amps"),
            refused(
                limit(json!({"safety_margin_amps": -1})),
                "safety_margin_amps",
            ),
            refused(
                limit(json!({"safety_margin_amps": 32})),
                "safety_margin_amps",
            ),
            refused(limit(json!({"fail_safe_amps": 3})), "fail_safe_amps"),
            refused(limit(json!({"fail_safe_amps": 80.5})), "fail_safe_amps"),
            refused(
                limit(json!({"min_amps": 10, "fail_safe_amps": 8})),
                "fail_safe_amps",
            ),
            refused(
                json!({"mode": "static", "grid_limit_amps": 7, "fail_safe_amps": 7.5}),
                "fail_safe_amps",
            ),
            // The fail-safe may not exceed a limit in any mode (the default 6 here).
            refused(
                json!({"mode": "disabled", "grid_limit_amps": 5}),
                "fail_safe_amps",
            ),
            refused(
                limit(json!({"meter_timeout_seconds": 4})),
                "meter_timeout_seconds",
            ),
            refused(
                limit(json!({"meter_timeout_seconds": 3601})),
                "meter_timeout_seconds",
            ),
            refused(
                limit(json!({"meter_timeout_seconds": 60.5})),
                "meter_timeout_seconds",
            ),
            refused(
                limit(json!({"meter_timeout_seconds": "60"})),
                "meter_timeout_seconds",
            ),
            refused(limit(json!({"priorities": [1]})), "priorities"),
            refused(
                limit(json!({"priorities": {unknown: 1}})),
                &format!("priorities.{unknown}"),
            ),
            refused(
                limit(json!({"priorities": {charger.clone(): 101}})),
                &format!("priorities.{charger}"),
            ),
            refused(
                limit(json!({"priorities": {charger.clone(): -1}})),
                &format!("priorities.{charger}"),
            ),
            refused(
                limit(json!({"priorities": {charger.clone(): "high"}})),
                &format!("priorities.{charger}"),
            ),
            // A NUL anywhere is refused on the field, and looked up nowhere.
            refused(limit(json!({"priorities": {"ab\u{0}c": 1}})), "priorities"),
            refused(
                limit(json!({"priorities": {format!("{charger}\u{0}"): 1}})),
                "priorities",
            ),
            refused(
                json!({"mode": "dynamic", "grid_limit_amps": 32}),
                "meter_uuid",
            ),
            refused(
                json!({"mode": "dynamic", "grid_limit_amps": 32, "meter_uuid": other_meter}),
                "meter_uuid",
            ),
            refused(
                json!({"mode": "dynamic", "grid_limit_amps": 32, "meter_uuid": unknown}),
                "meter_uuid",
            ),
            refused(
                json!({"mode": "dynamic", "grid_limit_amps": 32, "meter_uuid": 7}),
                "meter_uuid",
            ),
            refused(limit(json!({"meter_uuid": other_meter})), "meter_uuid"),
            refused(
                json!({"mode": "dynamic", "grid_limit_amps": 40, "meter_uuid": "ab\u{0}c"}),
                "meter_uuid",
            ),
            refused(limit(json!({"meter_uuid": "ab\u{0}c"})), "meter_uuid"),
            refused(
                json!({"mode": "dynamic", "grid_limit_amps": 40, "meter_uuid\u{0}": meter}),
                "meter_uuid",
            ),
        ];
        for (body, field) in cases {
            let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
            let names: Vec<&String> = errors.as_object().unwrap().keys().collect();
            assert_eq!(names, [&field], "{body}: {errors}");
        }
        assert_eq!(
            api.get_ok(&path).await,
            defaults,
            "nothing refused was saved"
        );
        let body = json!({"mode": "dynamic", "grid_limit_amps": "x", "meter_uuid": other_meter,
            "min_amps": 10, "meter_timeout_seconds": "60"});
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        assert_eq!(
            errors,
            json!({
                "grid_limit_amps": ["The grid limit amps field must be a number."],
                "meter_uuid": ["The selected meter uuid is invalid."],
                "fail_safe_amps": ["The fail safe amps field must be 0 or between 10 and 80."],
                "meter_timeout_seconds": ["The meter timeout seconds field must be an integer."],
            }),
            "every failure at once, in Laravel's wording"
        );
        let body = json!({"mode": "dynamic", "grid_limit_amps": 40, "meter_uuid": "ab\u{0}c"});
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        assert_eq!(
            errors,
            json!({"meter_uuid": ["The meter uuid field must not contain NUL characters."]}),
            "refused once, not looked up"
        );
        let body = json!({"mode": "static", "grid_limit_amps": 5, "fail_safe_amps": 5});
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        assert_eq!(
            errors,
            json!({"grid_limit_amps": ["The grid limit amps field minus the safety margin amps \
                must be at least the min amps, to leave room for at least one charging \
                connector at the minimum."],
                "fail_safe_amps": ["The fail safe amps field must be 0 or between 6 and 80."]}),
        );
        // With the default fail-safe (6), a tiny limit fails both rules.
        let body = json!({"mode": "static", "grid_limit_amps": 0.0001});
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        let names: Vec<&String> = errors.as_object().unwrap().keys().collect();
        assert_eq!(names, ["fail_safe_amps", "grid_limit_amps"], "{errors}");
        let body = json!({"mode": "static", "grid_limit_amps": 10, "fail_safe_amps": 12});
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        assert_eq!(
            errors,
            json!({"fail_safe_amps":
                ["The fail safe amps field must be less than or equal to the grid limit amps."]}),
        );
        for body in [json!("static"), json!([1])] {
            let answer = api.put(&path, &body).await;
            assert_eq!(answer.status, 400, "{body}: {}", answer.body);
        }
        let malformed = raw_put(&cms, &token, &path, "{\"mode\": ").await;
        assert_eq!(malformed, 400);

        // The bounds themselves are taken: the limit less the margin just fits min_amps
        // (decimals too), the fail-safe equals the limit.
        let body = json!({"mode": "static", "grid_limit_amps": 6.6, "safety_margin_amps": 0.2,
            "min_amps": 6.4, "fail_safe_amps": 6.6});
        api.expect(200, "PUT", &path, Some(&body)).await;
        let bounds = json!({
            "mode": "dynamic", "grid_limit_amps": 10000, "meter_uuid": meter, "min_amps": 6,
            "safety_margin_amps": 9994, "fail_safe_amps": 80, "meter_timeout_seconds": 5,
            "priorities": {charger.clone(): 0, hidden.clone(): 100}
        });
        api.expect(200, "PUT", &path, Some(&bounds)).await;
        // On the settings the PUT leads to: raising min_amps leaves no room under the stored
        // limit and margin; lowering the limit below the stored fail-safe (even disabled).
        let body = json!({"mode": "dynamic", "min_amps": 7});
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        let names: Vec<&String> = errors.as_object().unwrap().keys().collect();
        assert_eq!(names, ["grid_limit_amps"], "{errors}");
        let body = json!({"mode": "disabled", "grid_limit_amps": 70, "safety_margin_amps": 0});
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        let names: Vec<&String> = errors.as_object().unwrap().keys().collect();
        assert_eq!(names, ["fail_safe_amps"], "{errors}");
        // Disabled, a limit with no room for a connector is kept (it applies to no one).
        let body = json!({"mode": "disabled", "grid_limit_amps": 5, "safety_margin_amps": 0,
            "fail_safe_amps": 0});
        api.expect(200, "PUT", &path, Some(&body)).await;
        api.expect(200, "PUT", &path, Some(&bounds)).await;

        // A guest of the site reads (only the chargers it was given) but does not change them.
        let access = json!({"can_access_all_assets": false,
        "accessible_assets": [{"type": "charger", "uuid": charger}]});
        let guest = invite_guest(&cms, &api, &site, "guest@example.org", access).await;
        let shown = guest.get_ok(&path).await["data"].clone();
        assert_eq!(shown["priorities"], json!({charger.clone(): 0}));
        let forbidden = json!({"message": "This action is unauthorized."});
        // The status is meter readings: sensitive data, which this guest was not granted.
        let answer = guest.get(&status_path(&site)).await;
        assert_eq!((answer.status, &answer.json), (403, &forbidden));
        let answer = guest.put(&path, &json!({"mode": "disabled"})).await;
        assert_eq!((answer.status, &answer.json), (403, &forbidden));

        // Another customer sees nothing; a token without the scope is refused.
        let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
        let not_found = json!({"message": "Site not found."});
        let unknown_site = format!("/api/v3/sites/{unknown}/smart-charging");
        for (client, method, path) in [
            (&stranger, "GET", path.clone()),
            (&stranger, "PUT", path.clone()),
            (&stranger, "GET", status_path(&site)),
            (&api, "GET", unknown_site.clone()),
            (&api, "PUT", unknown_site),
            (&api, "GET", status_path(unknown)),
        ] {
            let answer = client
                .send(method, &path, Some(&json!({"mode": "disabled"})))
                .await;
            assert_eq!(
                (answer.status, &answer.json),
                (404, &not_found),
                "{method} {path}"
            );
        }
        let read_only = Api::new(
            &cms,
            &cms.create_token("r@example.com", Some("sites:read")).await,
        );
        let answer = read_only.put(&path, &json!({"mode": "disabled"})).await;
        assert_eq!((answer.status, &answer.json), (403, &forbidden));
        let no_scope = Api::new(
            &cms,
            &cms.create_token("c@example.com", Some("chargers:read"))
                .await,
        );
        assert_eq!(no_scope.get(&path).await.status, 403);
        assert_eq!(no_scope.get(&status_path(&site)).await.status, 403);
        assert_eq!(api.get_ok(&path).await["data"]["mode"], "dynamic");
    }
);

/// PUT `body` as is (not necessarily JSON); returns the status.
async fn raw_put(cms: &Cms, token: &str, path: &str, body: &'static str) -> u16 {
    let response = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("http client")
        .put(cms.http_url(path))
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .expect("the request is answered");
    response.status().as_u16()
}
