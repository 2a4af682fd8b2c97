//! Chargers as a REST client sees them: one charger, its connectors and their settings
//! (endpoint 7), its proxy servers (endpoints 1 and 2), and a site's chargers with registering
//! one there. Shapes, each validation rule, scopes, and other customers' chargers staying
//! invisible.

use crate::support::fleet::is_uuid;
use crate::support::rest::{invite_guest, operators_site};
use crate::support::{Api, Charger, Handshake, assert_record_time, eventually, on_both_stores};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Error as WsError;

fn charger_path(uuid: &str) -> String {
    format!("/api/v3/chargers/{uuid}")
}

fn connector_path(uuid: &str, connector: &str) -> String {
    format!("/api/v3/chargers/{uuid}/connectors/{connector}")
}

fn proxy_path(uuid: &str) -> String {
    format!("/api/v3/chargers/{uuid}/proxy")
}

fn site_chargers_path(site_uuid: &str) -> String {
    format!("/api/v3/sites/{site_uuid}/chargers")
}

fn assert_string_or_null(value: &Value, what: &str) {
    assert!(value.is_string() || value.is_null(), "{what}: {value}");
}

/// Asserts the reference's charger fields and their types.
fn assert_charger_shape(c: &Value) {
    assert!(c["uuid"].as_str().is_some_and(is_uuid), "uuid: {c}");
    assert!(c["id"].is_i64(), "id: {c}");
    assert!(c["identity"].is_string(), "identity: {c}");
    let status = c["connection_status"].as_str().unwrap_or_default();
    assert!(
        ["never_seen", "online", "offline"].contains(&status),
        "connection_status: {c}"
    );
    for field in [
        "reference",
        "status",
        "error",
        "error_info",
        "vendor_id",
        "vendor_error_code",
        "firmware_version",
        "server",
    ] {
        assert_string_or_null(&c[field], field);
    }
    for field in [
        "last_connection_at",
        "last_disconnection_at",
        "last_heartbeat_at",
    ] {
        if !c[field].is_null() {
            assert_record_time(&c[field], field);
        }
    }
    for field in ["setup_pending", "setup_completed", "blocked"] {
        assert!(c[field].is_boolean(), "{field}: {c}");
    }
    assert!(
        c["max_current"].is_number() || c["max_current"].is_null(),
        "max_current: {c}"
    );
    assert_record_time(&c["created_at"], "charger created_at");
    assert_record_time(&c["updated_at"], "charger updated_at");
    assert!(c["licenses"]["smart"].is_boolean(), "licenses: {c}");
    assert!(c["licenses"]["pro"].is_boolean(), "licenses: {c}");
    let profile = c["security_profile"].as_i64();
    assert!(
        profile.is_some_and(|p| (0..=3).contains(&p)),
        "security_profile: {c}"
    );
    for p in ["basic", "sensitive", "full"] {
        assert!(c["permissions"][p].is_boolean(), "permissions: {c}");
    }
}

/// Asserts the reference's full connector fields and their types.
fn assert_connector_shape(c: &Value) {
    for field in ["id", "charger_id", "connector_id"] {
        assert!(c[field].is_i64(), "{field}: {c}");
    }
    assert!(c["status"].is_string(), "status: {c}");
    assert!(c["error"].is_string(), "error: {c}");
    for field in [
        "error_info",
        "vendor_id",
        "vendor_error_code",
        "standard",
        "format",
        "power_type",
        "phase_rotation",
    ] {
        assert_string_or_null(&c[field], field);
    }
    for field in ["max_amperage", "max_voltage"] {
        assert!(c[field].is_i64() || c[field].is_null(), "{field}: {c}");
    }
    assert_record_time(&c["created_at"], "connector created_at");
    assert_record_time(&c["updated_at"], "connector updated_at");
}

fn assert_proxy_server_shape(s: &Value) {
    assert!(
        s["websocket_url"]
            .as_str()
            .is_some_and(|u| u.starts_with("wss://")),
        "websocket_url: {s}"
    );
    assert!(
        s["role"] == "leader" || s["role"] == "follower",
        "role: {s}"
    );
    assert_record_time(&s["created_at"], "proxy server created_at");
    assert_record_time(&s["updated_at"], "proxy server updated_at");
}

/// The connectors of a charger, as listed.
async fn connectors(api: &Api, uuid: &str) -> Vec<Value> {
    let listed = api
        .get_ok(&format!("{}/connectors", charger_path(uuid)))
        .await;
    listed["data"]
        .as_array()
        .unwrap_or_else(|| panic!("connectors list has a data array: {listed}"))
        .clone()
}

fn status_notification(connector: i64, status: &str) -> Value {
    json!({"connectorId": connector, "errorCode": "NoError", "status": status})
}

on_both_stores!(a_charger_is_shown_with_the_callers_permissions, |cms| {
    let uuid = cms.add_charger("CP-SHOW").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let shown = api.get_ok(&charger_path(&uuid)).await;
    let charger = &shown["data"];
    assert_charger_shape(charger);
    assert_eq!(charger["uuid"], uuid);
    assert_eq!(charger["identity"], "CP-SHOW");
    assert_eq!(charger["connection_status"], "never_seen");
    assert_eq!(
        charger["permissions"],
        json!({"basic": true, "sensitive": true, "full": true})
    );
    let listed = api.charger(&uuid).await.expect("listed");
    assert_eq!(&listed, charger, "the list shows the charger the same way");

    let missing = api.get(&charger_path(&"0".repeat(36))).await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    assert_eq!(api.get(&charger_path("not-a-uuid")).await.status, 404);
    let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
    assert_eq!(guest.get(&charger_path(&uuid)).await.status, 404);
    assert!(guest.charger(&uuid).await.is_none());
    let no_scope = Api::new(
        &cms,
        &cms.create_token("sites@example.com", Some("sites:read"))
            .await,
    );
    assert_eq!(no_scope.get(&charger_path(&uuid)).await.status, 403);
    let anonymous = api.get_authorized(&charger_path(&uuid), None).await;
    assert_eq!(anonymous.status, 401);
    assert_eq!(anonymous.json, json!({"message": "Unauthenticated."}));
});

on_both_stores!(connector_settings_survive_what_the_charger_reports, |cms| {
    let uuid = cms.add_charger("CP-CONN").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    assert!(connectors(&api, &uuid).await.is_empty());
    let mut charger = Charger::connect_and_boot(&cms, "CP-CONN", "1.0.0").await;
    charger
        .call_result("StatusNotification", status_notification(1, "Available"))
        .await;
    let reported = eventually("connector 1 to be listed", async || {
        match connectors(&api, &uuid).await.as_slice() {
            [one] if one["status"] == "Available" => Ok(one.clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert_connector_shape(&reported);
    assert_eq!(reported["connector_id"], 1);
    assert_eq!(reported["phase_rotation"], Value::Null);

    let body = json!({"phase_rotation": "RST", "max_amperage": 32});
    let updated = api
        .expect(200, "PUT", &connector_path(&uuid, "1"), Some(&body))
        .await;
    let updated = &updated["data"];
    assert_connector_shape(updated);
    assert_eq!(updated["id"], reported["id"]);
    assert_eq!(updated["charger_id"], reported["charger_id"]);
    assert_eq!(
        (&updated["phase_rotation"], &updated["max_amperage"]),
        (&json!("RST"), &json!(32))
    );
    assert_eq!(updated["status"], "Available");

    // The charger's next report changes the status, not the operator's settings.
    charger
        .call_result("StatusNotification", status_notification(1, "Charging"))
        .await;
    let after = eventually("connector 1 to be charging", async || {
        match connectors(&api, &uuid).await.as_slice() {
            [one] if one["status"] == "Charging" => Ok(one.clone()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert_eq!(after["phase_rotation"], "RST");
    assert_eq!(after["max_amperage"], 32);

    // A connector not reported yet is set up ahead of installation.
    let body = json!({"phase_rotation": "T", "max_amperage": "16"});
    let early = api
        .expect(200, "PUT", &connector_path(&uuid, "2"), Some(&body))
        .await;
    assert_eq!(early["data"]["connector_id"], 2);
    assert_eq!(early["data"]["status"], "Unavailable");
    assert_eq!(early["data"]["error"], "NoError");
    assert_eq!(early["data"]["max_amperage"], 16);
    let numbers: Vec<Value> = connectors(&api, &uuid)
        .await
        .iter()
        .map(|c| c["connector_id"].clone())
        .collect();
    assert_eq!(numbers, [json!(1), json!(2)]);

    for not_a_connector in ["0", "100", "abc", "1.5", "-1"] {
        let answer = api
            .put(&connector_path(&uuid, not_a_connector), &body)
            .await;
        assert_eq!(
            answer.status, 404,
            "connector {not_a_connector}: {}",
            answer.body
        );
    }
});

on_both_stores!(connector_settings_are_validated, |cms| {
    let uuid = cms.add_charger("CP-VALID").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let path = connector_path(&uuid, "1");
    for (body, field) in [
        (json!({"max_amperage": 16}), "phase_rotation"),
        (
            json!({"phase_rotation": "XYZ", "max_amperage": 16}),
            "phase_rotation",
        ),
        (
            json!({"phase_rotation": null, "max_amperage": 16}),
            "phase_rotation",
        ),
        (json!({"phase_rotation": "RST"}), "max_amperage"),
        (
            json!({"phase_rotation": "RST", "max_amperage": 0}),
            "max_amperage",
        ),
        (
            json!({"phase_rotation": "RST", "max_amperage": 1001}),
            "max_amperage",
        ),
        (
            json!({"phase_rotation": "RST", "max_amperage": 1.5}),
            "max_amperage",
        ),
        (
            json!({"phase_rotation": "RST", "max_amperage": "abc"}),
            "max_amperage",
        ),
    ] {
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        assert!(errors[field].is_array(), "{body}: {errors}");
        assert_eq!(errors.as_object().unwrap().len(), 1, "{body}: {errors}");
    }
    let errors = api.expect_invalid("PUT", &path, Some(&json!({}))).await;
    assert_eq!(
        errors["max_amperage"],
        json!(["The max amperage field is required."])
    );
    let body = json!({"phase_rotation": "RST", "max_amperage": 1001});
    let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
    assert_eq!(
        errors["max_amperage"],
        json!(["The max amperage field must be between 1 and 1000."])
    );
    let body = json!({"phase_rotation": "XYZ", "max_amperage": 1});
    let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
    assert_eq!(
        errors["phase_rotation"],
        json!(["The selected phase rotation is invalid."])
    );
    // The bounds and every allowed rotation are accepted.
    for (rotation, amperage) in [("RS", 1), ("TSR", 1000), ("S", 6)] {
        let body = json!({"phase_rotation": rotation, "max_amperage": amperage});
        api.expect(200, "PUT", &path, Some(&body)).await;
    }
});

on_both_stores!(
    changing_a_charger_needs_the_write_scope_and_its_site,
    |cms| {
        let uuid = cms.add_charger("CP-GUARD").await;
        let body = json!({"phase_rotation": "RST", "max_amperage": 16});
        let proxy = json!({"vendor_role": "ROLE_LEADER", "servers": null});
        let reader = Api::new(
            &cms,
            &cms.create_token("reader@example.com", Some("chargers:read"))
                .await,
        );
        reader
            .get_ok(&format!("{}/connectors", charger_path(&uuid)))
            .await;
        reader.get_ok(&proxy_path(&uuid)).await;
        let put = reader.put(&connector_path(&uuid, "1"), &body).await;
        assert_eq!(put.status, 403, "{}", put.body);
        assert_eq!(put.json, json!({"message": "This action is unauthorized."}));
        assert_eq!(reader.put(&proxy_path(&uuid), &proxy).await.status, 403);

        // Another customer sees nothing of the operators' charger.
        let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
        for path in [
            format!("{}/connectors", charger_path(&uuid)),
            proxy_path(&uuid),
        ] {
            assert_eq!(guest.get(&path).await.status, 404, "{path}");
        }
        assert_eq!(
            guest.put(&connector_path(&uuid, "1"), &body).await.status,
            404
        );
        assert_eq!(guest.put(&proxy_path(&uuid), &proxy).await.status, 404);

        let anonymous = reader
            .send_authorized("PUT", &connector_path(&uuid, "1"), Some(&body), None)
            .await;
        assert_eq!(anonymous.status, 401);
        let anonymous = reader
            .send_authorized("PUT", &proxy_path(&uuid), Some(&proxy), None)
            .await;
        assert_eq!(anonymous.status, 401);
    }
);

on_both_stores!(proxy_servers_are_replaced_and_listed, |cms| {
    let uuid = cms.add_charger("CP-PROXY").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let path = proxy_path(&uuid);
    assert_eq!(api.get_ok(&path).await, json!({"data": []}));

    let body = json!({
        "vendor_role": "ROLE_FOLLOWER",
        "servers": [
            {"websocket_url": "wss://leader.example.com/ocpp", "role": "leader"},
            {"websocket_url": "wss://10.0.0.2:8443/ocpp/CP-PROXY", "role": "follower"},
        ],
    });
    // Relaying is a `pro` feature: refused, naming the licence, until the operator grants it.
    let refused = api.expect(403, "PUT", &path, Some(&body)).await;
    assert!(
        refused["message"].as_str().unwrap().contains("pro license"),
        "{refused}"
    );
    assert_eq!(api.get_ok(&path).await, json!({"data": []}));
    cms.license("CP-PROXY", false, true).await;
    let set = api.expect(200, "PUT", &path, Some(&body)).await;
    let servers = set["data"].as_array().expect("a data array").clone();
    assert_eq!(servers.len(), 2, "{set}");
    servers.iter().for_each(assert_proxy_server_shape);
    assert_eq!(servers[0]["websocket_url"], "wss://leader.example.com/ocpp");
    assert_eq!(servers[1]["role"], "follower");
    assert_eq!(api.get_ok(&path).await, set, "GET shows what PUT set");

    // The sample's own body: no servers.
    let sample = json!({"vendor_role": "ROLE_FOLLOWER", "servers": null});
    let cleared = api.expect(200, "PUT", &path, Some(&sample)).await;
    assert_eq!(cleared, json!({"data": []}));
    assert_eq!(api.get_ok(&path).await, json!({"data": []}));
});

on_both_stores!(proxy_settings_are_validated, |cms| {
    let uuid = cms.add_charger("CP-PROXY-V").await;
    cms.license("CP-PROXY-V", false, true).await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let path = proxy_path(&uuid);
    let server = |url: &str| json!({"websocket_url": url, "role": "follower"});
    let eleven: Vec<Value> = (0..11)
        .map(|n| server(&format!("wss://p{n}.example.com")))
        .collect();
    for (body, field) in [
        (json!({"servers": null}), "vendor_role"),
        (json!({"vendor_role": "ROLE_BOSS"}), "vendor_role"),
        (json!({"vendor_role": 1}), "vendor_role"),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": "wss://x.example"}),
            "servers",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": eleven}),
            "servers",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": ["wss://x.example"]}),
            "servers.0",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": [{"role": "leader"}]}),
            "servers.0.websocket_url",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": [server("ws://x.example")]}),
            "servers.0.websocket_url",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": [server("https://x.example")]}),
            "servers.0.websocket_url",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": [server(&format!("wss://{}.example", "x".repeat(250)))]}),
            "servers.0.websocket_url",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": [server("wss://a.example"), server("wss://a.example")]}),
            "servers.1.websocket_url",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": [{"websocket_url": "wss://a.example"}]}),
            "servers.0.role",
        ),
        (
            json!({"vendor_role": "ROLE_LEADER", "servers": [{"websocket_url": "wss://a.example", "role": "boss"}]}),
            "servers.0.role",
        ),
    ] {
        let errors = api.expect_invalid("PUT", &path, Some(&body)).await;
        assert!(errors[field].is_array(), "{body}: {errors}");
        assert_eq!(errors.as_object().unwrap().len(), 1, "{body}: {errors}");
    }
    let errors = api.expect_invalid("PUT", &path, Some(&json!({}))).await;
    assert_eq!(
        errors["vendor_role"],
        json!(["The vendor role field is required."])
    );
    // A failed PUT changed nothing.
    assert_eq!(api.get_ok(&path).await, json!({"data": []}));
    for role in ["ROLE_LEADER", "ROLE_FOLLOWER", "ROLE_STANDALONE"] {
        api.expect(200, "PUT", &path, Some(&json!({"vendor_role": role})))
            .await;
    }
});

on_both_stores!(
    a_charger_registered_in_a_site_connects_with_its_password,
    |cms| {
        cms.add_charger("CP-SEED").await;
        let api = Api::new(&cms, &cms.operator_token().await);
        let site = operators_site(&api).await;
        let path = site_chargers_path(&site);
        let password = "s3cret-Pa55word!";
        let body = json!({"identity": "CP-NEW*01", "reference": "Bay 4", "password": password});
        let created = api.expect(201, "POST", &path, Some(&body)).await;
        let charger = &created["data"];
        assert_charger_shape(charger);
        assert_eq!(charger["identity"], "CP-NEW*01");
        assert_eq!(charger["reference"], "Bay 4");
        assert_eq!(charger["connection_status"], "never_seen");
        assert_eq!(charger["permissions"]["full"], true);
        assert!(
            !created.to_string().contains(password),
            "the password is not echoed"
        );
        let uuid = charger["uuid"].as_str().expect("uuid").to_string();
        assert_eq!(api.get_ok(&charger_path(&uuid)).await["data"], *charger);

        // The site's list shows it beside the seed, in Laravel's page envelope.
        let listed = api.get_ok(&path).await;
        let identities: Vec<&Value> = listed["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|c| &c["identity"])
            .collect();
        assert_eq!(identities, [&json!("CP-SEED"), &json!("CP-NEW*01")]);
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .for_each(assert_charger_shape);
        assert_eq!(listed["meta"]["path"], path);
        assert_eq!(listed["meta"]["per_page"], 25);
        assert_eq!(
            (&listed["meta"]["from"], &listed["meta"]["to"]),
            (&json!(1), &json!(2))
        );
        assert_eq!(listed["links"]["next"], Value::Null);

        // The gateways learn of it within about a second; the password is its credential.
        let mut connected = eventually("the new charger to be accepted", async || {
            Handshake::new(&cms, "CP-NEW*01")
                .basic_auth("CP-NEW*01", password)
                .open()
                .await
                .map_err(|e| e.to_string())
        })
        .await;
        let answer = connected
            .call_result("BootNotification", crate::support::boot_payload("2.0.0"))
            .await;
        assert_eq!(answer["status"], "Accepted", "{answer}");
        let wrong = Handshake::new(&cms, "CP-NEW*01")
            .basic_auth("CP-NEW*01", "not-the-password-at-all")
            .refused_status()
            .await;
        assert_eq!(wrong, 401);
        api.wait_for_charger(&uuid, "online", |c| c["connection_status"] == "online")
            .await;

        assert_eq!(
            created.get("password"),
            None,
            "a given password is never shown"
        );

        // Without a password, one is generated and shown once: no charger is open by accident.
        let plain = json!({"identity": "CP-PLAIN", "reference": null});
        let created = api.expect(201, "POST", &path, Some(&plain)).await;
        assert_eq!(created["data"]["reference"], Value::Null);
        let generated = created["password"].as_str().expect("a generated password");
        assert_eq!(generated.len(), 32, "{created}");
        assert!(generated.chars().all(|c| c.is_ascii_alphanumeric()));
        eventually("the charger to be accepted with its password", async || {
            Handshake::new(&cms, "CP-PLAIN")
                .basic_auth("CP-PLAIN", generated)
                .open()
                .await
                .map_err(|e| e.to_string())
        })
        .await;
        assert_eq!(Handshake::new(&cms, "CP-PLAIN").refused_status().await, 401);
        let shown = api
            .get_ok(&charger_path(created["data"]["uuid"].as_str().unwrap()))
            .await;
        assert!(
            !shown.to_string().contains(generated),
            "shown only once: {shown}"
        );

        // Security profile 0, asked for, connects without credentials (a test bench).
        let open = json!({"identity": "CP-OPEN", "security_profile": 0});
        let created = api.expect(201, "POST", &path, Some(&open)).await;
        assert_eq!(created.get("password"), None, "{created}");
        eventually("the open charger to be accepted", async || {
            Handshake::new(&cms, "CP-OPEN")
                .open()
                .await
                .map_err(|e| e.to_string())
        })
        .await;
    }
);

on_both_stores!(a_site_charger_registration_is_validated, |cms| {
    cms.add_charger("CP-TAKEN").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let path = site_chargers_path(&operators_site(&api).await);
    for (body, field, message) in [
        (
            json!({"reference": "x"}),
            "identity",
            "The identity field is required.",
        ),
        (
            json!({"identity": "CP 01"}),
            "identity",
            "The identity field format is invalid.",
        ),
        (
            json!({"identity": "CP/01"}),
            "identity",
            "The identity field format is invalid.",
        ),
        (
            json!({"identity": "A".repeat(49)}),
            "identity",
            "The identity field must not be greater than 48 characters.",
        ),
        (
            json!({"identity": "CP-TAKEN"}),
            "identity",
            "The identity has already been taken.",
        ),
        (
            json!({"identity": "CP-1", "reference": "x".repeat(256)}),
            "reference",
            "The reference field must not be greater than 255 characters.",
        ),
        (
            json!({"identity": "CP-1", "password": "short"}),
            "password",
            "The password field must be at least 16 characters.",
        ),
        (
            json!({"identity": "CP-1", "password": "p".repeat(41)}),
            "password",
            "The password field must not be greater than 40 characters.",
        ),
        (
            json!({"identity": "CP-1", "password": "with:colon-and-long-enough"}),
            "password",
            "The password field format is invalid.",
        ),
        (
            json!({"identity": "CP-1", "password": "with space-and-long-enough"}),
            "password",
            "The password field format is invalid.",
        ),
        (
            json!({"identity": "CP-1", "security_profile": 0, "password": "sixteen-chars-ok"}),
            "password",
            "The password field is prohibited when security profile is 0.",
        ),
        (
            json!({"identity": "CP-1", "security_profile": 4}),
            "security_profile",
            "The security profile field must be between 0 and 3.",
        ),
        (
            json!({"identity": "CP-1", "security_profile": "x"}),
            "security_profile",
            "The security profile field must be an integer.",
        ),
    ] {
        let errors = api.expect_invalid("POST", &path, Some(&body)).await;
        assert_eq!(errors, json!({field: [message]}), "{body}");
    }
    // The longest identity of the gateway's character set is accepted.
    let longest = format!("{}*-_=:+|@.", "A".repeat(38));
    let created = api
        .expect(201, "POST", &path, Some(&json!({"identity": longest})))
        .await;
    assert_eq!(created["data"]["identity"], longest);
});

on_both_stores!(a_sites_chargers_are_for_those_who_see_the_site, |cms| {
    let seed = cms.add_charger("CP-OPS").await;
    let operator = Api::new(&cms, &cms.operator_token().await);
    let path = site_chargers_path(&operators_site(&operator).await);
    let listed = operator.get_ok(&path).await;
    assert_eq!(listed["data"][0]["uuid"], seed);
    let body = json!({"identity": "CP-NEW"});

    let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
    assert_eq!(guest.get(&path).await.status, 404);
    assert_eq!(guest.post(&path, &body).await.status, 404);
    let reader = Api::new(
        &cms,
        &cms.create_token("reader@example.com", Some("chargers:read"))
            .await,
    );
    reader.get_ok(&path).await;
    assert_eq!(reader.post(&path, &body).await.status, 403);
    let no_scope = Api::new(
        &cms,
        &cms.create_token("sites@example.com", Some("sites:read"))
            .await,
    );
    assert_eq!(no_scope.get(&path).await.status, 403);
    let anonymous = operator
        .send_authorized("POST", &path, Some(&body), None)
        .await;
    assert_eq!(anonymous.status, 401);
    let unknown = site_chargers_path(&"0".repeat(36));
    assert_eq!(operator.get(&unknown).await.status, 404);
    assert_eq!(operator.post(&unknown, &body).await.status, 404);
    // Nothing was registered by the refused requests.
    assert_eq!(
        operator.get_ok(&path).await["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
});

on_both_stores!(
    a_guest_of_the_site_sees_its_chargers_but_changes_nothing,
    |cms| {
        let uuid = cms.add_charger("CP-SHARED").await;
        let operator = Api::new(&cms, &cms.operator_token().await);
        let site = operators_site(&operator).await;
        // The operators invite a guest's team to the site with basic access (the invite flow).
        let guest = invite_guest(&cms, &operator, &site, "guest@example.com", json!({})).await;

        let shown = guest.get_ok(&charger_path(&uuid)).await;
        assert_eq!(
            shown["data"]["permissions"],
            json!({"basic": true, "sensitive": false, "full": false})
        );
        assert_eq!(
            guest.charger(&uuid).await.expect("listed")["permissions"]["full"],
            false
        );
        guest
            .get_ok(&format!("{}/connectors", charger_path(&uuid)))
            .await;
        guest.get_ok(&proxy_path(&uuid)).await;
        let listed = guest.get_ok(&site_chargers_path(&site)).await;
        assert_eq!(listed["data"][0]["uuid"], uuid);

        let settings = json!({"phase_rotation": "RST", "max_amperage": 16});
        let put = guest.put(&connector_path(&uuid, "1"), &settings).await;
        assert_eq!(put.status, 403, "{}", put.body);
        let proxy = json!({"vendor_role": "ROLE_LEADER"});
        assert_eq!(guest.put(&proxy_path(&uuid), &proxy).await.status, 403);
        let new = json!({"identity": "CP-GUESTS"});
        assert_eq!(
            guest.post(&site_chargers_path(&site), &new).await.status,
            403
        );
        assert!(
            connectors(&operator, &uuid).await.is_empty(),
            "nothing was changed"
        );
    }
);

on_both_stores!(
    a_chargers_security_profile_and_password_are_changed,
    |cms| {
        cms.add_charger("CP-SEED").await;
        let api = Api::new(&cms, &cms.operator_token().await);
        let site = operators_site(&api).await;
        let first = "first-Pa55word-of-CP";
        let body = json!({"identity": "CP-SEC", "password": first});
        let created = api
            .expect(201, "POST", &site_chargers_path(&site), Some(&body))
            .await;
        let uuid = created["data"]["uuid"].as_str().expect("uuid").to_string();
        let path = format!("/api/v3/chargers/{uuid}/security");
        eventually("the charger to be accepted", async || {
            Handshake::new(&cms, "CP-SEC")
                .basic_auth("CP-SEC", first)
                .open()
                .await
                .map_err(|e| e.to_string())
        })
        .await;
        // Each probe's session ends before a change: a connected charger would be sent its
        // new password instead (tests/e2e/actions/secrets.rs).
        let offline = async || {
            let what = "offline after the probe";
            api.wait_for_charger(&uuid, what, |c| c["connection_status"] == "offline")
                .await
        };
        offline().await;

        // Rules as at registration: nothing changes when one fails.
        for (body, field) in [
            (json!({"security_profile": 4}), "security_profile"),
            (
                json!({"security_profile": 3, "password": "x".repeat(20)}),
                "password",
            ),
            (json!({"password": "short"}), "password"),
        ] {
            let refused = api.expect(422, "PUT", &path, Some(&body)).await;
            assert!(refused["errors"][field].is_array(), "{body}: {refused}");
        }

        // A new password, generated: shown once; the old one stops working.
        let changed = api.expect(200, "PUT", &path, Some(&json!({}))).await;
        assert_eq!(changed["data"]["security_profile"], 1, "{changed}");
        let second = changed["password"].as_str().expect("a generated password");
        assert_eq!(second.len(), 32);
        eventually("the new password to be taken", async || {
            Handshake::new(&cms, "CP-SEC")
                .basic_auth("CP-SEC", second)
                .open()
                .await
                .map_err(|e| e.to_string())
        })
        .await;
        let old = Handshake::new(&cms, "CP-SEC")
            .basic_auth("CP-SEC", first)
            .refused_status()
            .await;
        assert_eq!(old, 401, "the old password is refused");
        offline().await;

        // Profile 2: the same password on plain ws is refused, as TLS is required.
        let body = json!({"security_profile": 2, "password": first});
        let changed = api.expect(200, "PUT", &path, Some(&body)).await;
        assert_eq!(changed["data"]["security_profile"], 2);
        assert_eq!(
            changed.get("password"),
            None,
            "a given password is not echoed"
        );
        eventually("plain ws to be refused", async || {
            match Handshake::new(&cms, "CP-SEC")
                .basic_auth("CP-SEC", first)
                .open()
                .await
            {
                Err(WsError::Http(response)) if response.status() == 403 => Ok(()),
                Ok(_) => Err("still accepted on plain ws".to_string()),
                Err(other) => Err(other.to_string()),
            }
        })
        .await;
        assert_eq!(
            api.get_ok(&charger_path(&uuid)).await["data"]["security_profile"],
            2
        );

        // Someone else's charger stays out of reach.
        let stranger = cms.guest_token("stranger@example.com").await;
        let outsider = Api::new(&cms, &stranger);
        outsider
            .expect(404, "PUT", &path, Some(&json!({"security_profile": 0})))
            .await;
        assert_eq!(
            api.get_ok(&charger_path(&uuid)).await["data"]["security_profile"],
            2
        );
    }
);
