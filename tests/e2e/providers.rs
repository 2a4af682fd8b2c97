//! Providers (docs/tariffs.md "Providers"), end to end: a team's e-mobility provider, its
//! drivers' tags imported from a CSV file, accepted at the team's `id_tags` site by the Python
//! `ocpp` charge point, and their sessions priced with the provider's tariff.

use crate::support::commanded::CommandedCharger;
use crate::support::rest::{create_tariff, operators_site, team_of_type, uuid_of};
use crate::support::{Api, Cms, eventually};
use serde_json::{Value, json};

fn energy_only(name: &str, price: &str) -> Value {
    json!({
        "name": name,
        "currency": "EUR",
        "elements": [{"price_components": [
            {"type": "ENERGY", "price": price, "vat": null, "step_size": 1}]}]
    })
}

/// Authorize until the gateway answers `status` for `tag` (its registry and tags follow the
/// store within a second).
async fn authorized(charger: &mut CommandedCharger, tag: &str, status: &str) {
    eventually(&format!("{tag} to be {status}"), async || {
        let answer = charger.send(&format!("authorize {tag}")).await;
        match answer["idTagInfo"]["status"].as_str() {
            Some(s) if s == status => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

/// Charges 10 kWh in an hour with `tag`; returns the transaction as the API lists it, priced.
async fn charge(api: &Api, uuid: &str, charger: &mut CommandedCharger, tag: &str) -> Value {
    let answer = charger
        .send(&format!("start 1 {tag} 0 2026-11-20T10:00:00Z"))
        .await;
    assert_eq!(answer["idTagInfo"]["status"], "Accepted", "{answer}");
    let id = answer["transactionId"].as_i64().expect("a transactionId");
    charger
        .send(&format!("stop {id} - 10000 2026-11-20T11:00:00Z"))
        .await;
    eventually("the final cost", async || {
        let listed = api
            .get_ok(&format!("/api/v3/chargers/{uuid}/transactions"))
            .await;
        let all = listed["data"].as_array().cloned().unwrap_or_default();
        match all.into_iter().find(|t| t["id"] == id) {
            Some(t) if t["stopped_at"].is_string() && t["cost"]["excl_vat"].is_string() => Ok(t),
            other => Err(format!("{other:?}")),
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_providers_drivers_are_accepted_and_pay_the_providers_tariff() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-ROAM").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let team = uuid_of(&team_of_type(&api, "operators").await);
    let tariffs = format!("/api/v3/teams/{team}/tariffs");
    let site_tariff = create_tariff(&api, &team, &energy_only("Site", "0.30")).await;
    let roaming = create_tariff(&api, &team, &energy_only("Roaming", "0.50")).await;
    let site = operators_site(&api).await;
    let closed = json!({"authorization": "id_tags", "tariff_uuid": site_tariff});
    api.expect(200, "PUT", &format!("/api/v3/sites/{site}"), Some(&closed))
        .await;
    api.expect(
        201,
        "POST",
        &format!("/api/v3/teams/{team}/id-tags"),
        Some(&json!({"id_tag": "OWN-1"})),
    )
    .await;

    // The provider: its fields checked, then made.
    let providers = format!("/api/v3/teams/{team}/providers");
    let bad = json!({"name": "Roam", "country_code": "nl", "party_id": "E", "tariff_uuid": "x"});
    let errors = api.expect_invalid("POST", &providers, Some(&bad)).await;
    for field in ["country_code", "party_id", "tariff_uuid"] {
        assert!(errors[field].is_array(), "{field}: {errors}");
    }
    let body =
        json!({"name": "Roam", "country_code": "NL", "party_id": "EMP", "tariff_uuid": roaming});
    let created = api.expect(201, "POST", &providers, Some(&body)).await;
    let provider = uuid_of(&created["data"]);
    assert_eq!(created["data"]["tariff_uuid"], roaming.as_str());
    assert_eq!(
        api.get_ok(&providers).await["data"][0]["uuid"],
        provider.as_str()
    );

    // Its drivers' tags from a CSV file, as a team's.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("roam.csv");
    std::fs::write(&file, "id_tag,name\nROAM-1,A driver\n").expect("write the tags");
    let out = cms
        .cli(&[
            "id-tag",
            "import",
            "--team",
            &provider,
            file.to_str().expect("utf-8"),
        ])
        .await;
    assert!(out.status.success(), "{}", out.stderr);
    let tags = api.get_ok(&format!("{providers}/{provider}/id-tags")).await;
    assert_eq!(tags["data"][0]["id_tag"], "ROAM-1", "{tags}");

    let mut charger = CommandedCharger::connect(&cms.ocpp_url("CP-ROAM"), "CP-ROAM").await;
    authorized(&mut charger, "ROAM-1", "Accepted").await;
    authorized(&mut charger, "STRANGER", "Invalid").await;

    // 10 kWh: the provider's driver pays 0.50 a kWh, the team's own 0.30.
    let roamed = charge(&api, &uuid, &mut charger, "ROAM-1").await;
    assert_eq!(roamed["provider_uuid"], provider.as_str());
    assert_eq!(roamed["tariff_uuid"], roaming.as_str());
    assert_eq!(roamed["cost"]["excl_vat"], "5.00", "{roamed}");
    let own = charge(&api, &uuid, &mut charger, "OWN-1").await;
    assert_eq!(own["provider_uuid"], Value::Null);
    assert_eq!(own["tariff_uuid"], site_tariff.as_str());
    assert_eq!(own["cost"]["excl_vat"], "3.00", "{own}");

    // The provider's tariff is in use; the provider goes, and its drivers with it.
    api.expect(409, "DELETE", &format!("{tariffs}/{roaming}"), None)
        .await;
    api.expect(200, "DELETE", &format!("{providers}/{provider}"), None)
        .await;
    authorized(&mut charger, "ROAM-1", "Invalid").await;
    api.expect(200, "DELETE", &format!("{tariffs}/{roaming}"), None)
        .await;
    charger.finish().await;
}
