//! Meters (endpoints 4 and 12): a CT meter attached to a charger shows the charger's Inlet
//! currents per phase, and the power when the charger reports Inlet voltages too.

use crate::support::rest::{invite_guest, operators_site, team_of_type};
use crate::support::{Api, Charger, Cms, assert_record_time, eventually, on_both_stores};
use serde_json::{Value, json};

const NO_POWER: &str = "Power information cannot be retrieved.";

/// The id of the operators' team, which owns the default site `cms charger add` uses.
async fn operators_team(api: &Api) -> i64 {
    let team = team_of_type(api, "operators").await;
    team["id"].as_i64().expect("an integer id")
}

fn meters_path(team: impl std::fmt::Display) -> String {
    format!("/api/v2/teams/{team}/meters")
}

fn chargee_path(charger_uuid: &str) -> String {
    format!("/api/v3/meters/chargee/{charger_uuid}")
}

/// A charger registered on the default site, its numeric id, and an operator's client.
async fn charger_of_operators(cms: &Cms, identity: &str) -> (Api, String, i64) {
    let uuid = cms.add_charger(identity).await;
    let api = Api::new(cms, &cms.operator_token().await);
    let id = api.charger(&uuid).await.expect("the charger is listed")["id"]
        .as_i64()
        .expect("an integer id");
    (api, uuid, id)
}

/// A MeterValues request for connector 0 with Inlet samples `(measurand, phase, value)`.
fn inlet_reading(timestamp: &str, samples: &[(&str, &str, &str)]) -> Value {
    let sampled: Vec<Value> = samples
        .iter()
        .map(|(measurand, phase, value)| {
            json!({"value": value, "measurand": measurand, "phase": phase, "location": "Inlet"})
        })
        .collect();
    json!({"connectorId": 0, "meterValue": [{"timestamp": timestamp, "sampledValue": sampled}]})
}

on_both_stores!(
    a_ct_meter_shows_its_chargers_inlet_currents_and_power,
    |cms| {
        let (api, uuid, charger_id) = charger_of_operators(&cms, "CP-MTR-1").await;
        let team = operators_team(&api).await;
        let body = json!({"type": "ct_meter", "charger_id": charger_id});
        let created = api
            .expect(201, "POST", &meters_path(team), Some(&body))
            .await;
        let meter = &created["data"];
        assert!(meter["uuid"].is_string() && meter["id"].is_i64(), "{meter}");
        for field in ["created_at", "updated_at"] {
            assert_record_time(&meter[field], field);
        }
        let no_reading = json!({"l1": 0.0, "l2": 0.0, "l3": 0.0, "updated_at": "-"});
        assert_eq!(
            meter,
            &json!({
                "uuid": meter["uuid"], "id": meter["id"], "type": "ct_meter",
                "latest_data": no_reading, "power": NO_POWER,
                "created_at": meter["created_at"], "updated_at": meter["updated_at"],
            })
        );
        let chargee = chargee_path(&uuid);
        assert_eq!(api.get_ok(&chargee).await, created, "the chargee look-up");

        let mut charger = Charger::connect_and_boot(&cms, "CP-MTR-1", "1.0.0").await;
        let currents = [
            ("Current.Import", "L1", "16.1"),
            ("Current.Import", "L2", "16.2"),
            ("Current.Import", "L3", "16.3"),
        ];
        let reading = inlet_reading("2026-02-10T09:00:00Z", &currents);
        charger.call_result("MeterValues", reading).await;
        let expected = json!({"l1": 16.1, "l2": 16.2, "l3": 16.3,
        "updated_at": "2026-02-10T09:00:00.000000Z"});
        let read = eventually("the meter to show the Inlet currents", async || {
            let answer = api.get_ok(&chargee).await;
            match answer["data"]["latest_data"] == expected {
                true => Ok(answer),
                false => Err(answer.to_string()),
            }
        })
        .await;
        assert_eq!(read["data"]["power"], NO_POWER, "currents without voltages");
        let endpoint_8 = api.latest_meter_value(&uuid, 0).await;
        assert_eq!(endpoint_8.status, 200, "{}", endpoint_8.body);

        let mut with_voltages = currents.map(|(m, p, _)| (m, p, "16")).to_vec();
        with_voltages.extend([
            ("Voltage", "L1-N", "230"),
            ("Voltage", "L2-N", "230"),
            ("Voltage", "L3-N", "230"),
        ]);
        let reading = inlet_reading("2026-02-10T09:01:00Z", &with_voltages);
        charger.call_result("MeterValues", reading).await;
        let read = eventually("the meter to show the power", async || {
            let answer = api.get_ok(&chargee).await;
            match answer["data"]["power"] == "11.04 kW" {
                true => Ok(answer),
                false => Err(answer.to_string()),
            }
        })
        .await;
        let latest = &read["data"]["latest_data"];
        assert_eq!(
            latest,
            &json!({"l1": 16.0, "l2": 16.0, "l3": 16.0, "updated_at": "2026-02-10T09:01:00.000000Z"})
        );
    }
);

on_both_stores!(attaching_a_meter_checks_its_type_charger_and_team, |cms| {
    let (api, _uuid, charger_id) = charger_of_operators(&cms, "CP-MTR-2").await;
    let team = operators_team(&api).await;
    let path = meters_path(team);
    for (body, field, message) in [
        (
            json!({"charger_id": charger_id}),
            "type",
            "The type field is required.",
        ),
        (
            json!({"type": "dc_meter", "charger_id": charger_id}),
            "type",
            "The selected type is invalid.",
        ),
        (
            json!({"type": 5, "charger_id": charger_id}),
            "type",
            "The type field must be a string.",
        ),
        (
            json!({"type": "ct_meter"}),
            "charger_id",
            "The charger id field is required.",
        ),
        (
            json!({"type": "ct_meter", "charger_id": "one"}),
            "charger_id",
            "The charger id field must be an integer.",
        ),
        (
            json!({"type": "ct_meter", "charger_id": 987654}),
            "charger_id",
            "The selected charger id is invalid.",
        ),
    ] {
        let errors = api.expect_invalid("POST", &path, Some(&body)).await;
        assert_eq!(errors[field], json!([message]), "{body}: {errors}");
    }

    // A team of the caller's that does not own the charger's site cannot attach to it.
    let new_team = json!({"name": "Installers", "email": "i@example.com", "type": "installer"});
    let other = api
        .expect(201, "POST", "/api/v2/teams", Some(&new_team))
        .await;
    let other_path = meters_path(&other["data"]["id"]);
    let body = json!({"type": "ct_meter", "charger_id": charger_id});
    let errors = api.expect_invalid("POST", &other_path, Some(&body)).await;
    assert_eq!(
        errors["charger_id"],
        json!(["The selected charger id is invalid."])
    );

    api.expect(201, "POST", &path, Some(&body)).await;
    let errors = api.expect_invalid("POST", &path, Some(&body)).await;
    assert_eq!(
        errors["charger_id"],
        json!(["The charger already has a ct_meter."])
    );

    let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
    for (client, path) in [
        (&guest, path.clone()),
        (&api, meters_path(987654)),
        (&api, meters_path("first")),
    ] {
        let answer = client.post(&path, &body).await;
        assert_eq!(answer.status, 404, "POST {path}: {}", answer.body);
    }
    let unauthenticated = api.send_authorized("POST", &path, Some(&body), None).await;
    assert_eq!(unauthenticated.status, 401, "{}", unauthenticated.body);
    let read_only = Api::new(
        &cms,
        &cms.create_token("r@example.com", Some("meters:read")).await,
    );
    let forbidden = read_only.post(&path, &body).await;
    assert_eq!(
        (forbidden.status, forbidden.json),
        (403, json!({"message": "This action is unauthorized."}))
    );
});

on_both_stores!(
    the_chargee_look_up_needs_a_visible_charger_with_a_meter,
    |cms| {
        let (api, uuid, charger_id) = charger_of_operators(&cms, "CP-MTR-3").await;
        let chargee = chargee_path(&uuid);
        let missing = api.get(&chargee).await;
        assert_eq!(
            (missing.status, missing.json),
            (404, json!({"message": "Meter not found."}))
        );
        let team = operators_team(&api).await;
        let body = json!({"type": "ct_meter", "charger_id": charger_id});
        api.expect(201, "POST", &meters_path(team), Some(&body))
            .await;
        assert_eq!(api.get(&chargee).await.status, 200);

        let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
        let unknown = chargee_path("00000000-0000-4000-8000-000000000000");
        for (client, path) in [(&guest, &chargee), (&api, &unknown)] {
            let answer = client.get(path).await;
            assert_eq!(answer.status, 404, "GET {path}: {}", answer.body);
        }
        let unauthenticated = api.get_authorized(&chargee, None).await;
        assert_eq!(unauthenticated.status, 401, "{}", unauthenticated.body);
        let write_only = Api::new(
            &cms,
            &cms.create_token("w@example.com", Some("meters:write"))
                .await,
        );
        assert_eq!(write_only.get(&chargee).await.status, 403);
    }
);

/// Invites `email` to the charger's site (the default site) and accepts for their personal
/// team; returns their client and that team's id.
async fn granted_guest(cms: &Cms, owner: &Api, email: &str, data_access: bool) -> (Api, i64) {
    let site = operators_site(owner).await;
    let access = json!({"data_access": data_access});
    let guest = invite_guest(cms, owner, &site, email, access).await;
    let team = team_of_type(&guest, "personal").await["id"]
        .as_i64()
        .expect("the guest's personal team");
    (guest, team)
}

on_both_stores!(
    a_granted_team_reads_meters_with_data_access_but_attaches_none,
    |cms| {
        let (api, uuid, charger_id) = charger_of_operators(&cms, "CP-MTR-4").await;
        let team = operators_team(&api).await;
        let body = json!({"type": "ct_meter", "charger_id": charger_id});
        let created = api
            .expect(201, "POST", &meters_path(team), Some(&body))
            .await;
        let chargee = chargee_path(&uuid);

        let (with_data, with_data_team) = granted_guest(&cms, &api, "d@example.org", true).await;
        assert_eq!(with_data.get_ok(&chargee).await, created);
        let attach = with_data.post(&meters_path(with_data_team), &body).await;
        assert_eq!(
            attach.status, 403,
            "only the site's owner attaches: {}",
            attach.body
        );

        let (basic, _) = granted_guest(&cms, &api, "b@example.org", false).await;
        let refused = basic.get(&chargee).await;
        assert_eq!(
            (refused.status, refused.json),
            (403, json!({"message": "This action is unauthorized."}))
        );
        let transactions = format!("/api/v3/chargers/{uuid}/transactions");
        assert_eq!(basic.get(&transactions).await.status, 403);
        assert_eq!(with_data.get(&transactions).await.status, 200);
    }
);
