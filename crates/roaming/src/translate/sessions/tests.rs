//! A party's transaction as Session and CDR objects, and the pushes that carry them.

use super::objects::{cdr, energy_wh, session};
use super::{post_cdr, put_session};
use cms_ocpi::sessions::{AuthMethod, SessionStatus};
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::sessions::OcpiTransaction;
use cms_store::signed_values::SignedValue;
use cms_store::transaction_readings::TransactionReading;
use cms_store::transactions::TransactionRow;
use serde_json::{Value, json};

const TARIFF: &str = r#"{"currency":"EUR","elements":[{"price_components":[
    {"type":"ENERGY","price":"0.30","vat":21,"step_size":1},
    {"type":"PARKING_TIME","price":"6.00","vat":null,"step_size":1}]}],
    "min_price":null,"max_price":{"excl_vat":"50.00","incl_vat":null}}"#;

/// A party's transaction of 4 kWh from 10:00 to 11:00 at a site in the Netherlands, on `tag`.
fn transaction(running: bool) -> OcpiTransaction {
    let transaction = TransactionRow {
        id: 7,
        ocpp_transaction_id: 17,
        station_transaction_id: None,
        charger_id: 3,
        charger_connector_id: Some(5),
        connector_id: 2,
        reservation_id: None,
        id_tag: "ROAM-1".into(),
        id_tag_status: Some("Accepted".into()),
        meter_start: 1000,
        meter_stop: (!running).then_some(5000),
        started_at: "2026-11-29T10:00:00.000000Z".into(),
        stopped_at: (!running).then(|| "2026-11-29T11:00:00.000000Z".into()),
        stop_reason: (!running).then(|| "EVDisconnected".into()),
        created_at: "2026-11-29T10:00:00.500000Z".into(),
        updated_at: "2026-11-29T11:00:00.500000Z".into(),
        tariff_uuid: Some("tariff-uuid".into()),
        tariff: Some(TARIFF.into()),
        tariff_version: Some(2),
        time_zone: Some("Europe/Amsterdam".into()),
        cost: None,
        provider_uuid: Some("provider-uuid".into()),
        uuid: Some("0d6f6b7e-5a3c-4f0e-9a51-2b1c3d4e5f60".into()),
    };
    OcpiTransaction {
        transaction,
        session_id: "0d6f6b7e-5a3c-4f0e-9a51-2b1c3d4e5f60".into(),
        provider_id: 4,
        charger_uuid: "charger-uuid".into(),
        charger_identity: "cp-0042".into(),
        site_uuid: "site-uuid".into(),
        site_name: "Depot".into(),
        street: "A street whose name runs on for quite a while".into(),
        house_number: 12,
        house_number_addition: Some("B".into()),
        postal_code: "1012 AB".into(),
        city: "Amsterdam".into(),
        country: "NL".into(),
        latitude: None,
        longitude: None,
        connector_standard: Some("iec_62196_t2_combo".into()),
        connector_format: Some("tethered".into()),
        connector_power_type: None,
        cpo_country_code: "NL".into(),
        cpo_party_id: "CMS".into(),
        emsp_country_code: "DE".into(),
        emsp_party_id: "EMP".into(),
        token: None,
        latest_reading: None,
        latest_reading_at: None,
        remote_start: None,
        remote_start_at: None,
        tariff_valid_from: Some("2026-11-01T08:00:00.000000Z".into()),
        last_updated: "2026-11-29T11:00:00.500000Z".into(),
        signed_values: Vec::new(),
    }
}

/// The cost as the REST API gives it.
fn cost(excl: &str, incl: &str, parking_hours: &str) -> Value {
    json!({"currency": "EUR", "excl_vat": excl, "incl_vat": incl, "components": [
        {"type": "ENERGY", "volume": "4", "excl_vat": "1.20"},
        {"type": "PARKING_TIME", "volume": parking_hours, "excl_vat": "1.50"}]})
}

fn reading(register_wh: i64, at: &str) -> String {
    json!([{"timestamp": at, "sampledValue": [
        {"value": "230.1", "context": "Sample.Periodic", "format": "Raw",
         "measurand": "Voltage", "phase": "L1-N", "location": "Outlet", "unit": "V"},
        {"value": (register_wh as f64 / 1000.0).to_string(), "context": "Sample.Periodic",
         "format": "Raw", "measurand": "Energy.Active.Import.Register", "location": "Outlet",
         "unit": "kWh"}]}])
    .to_string()
}

fn kept(wh: i64, at: &str) -> TransactionReading {
    TransactionReading {
        transaction_id: 7,
        minute: at[..16].into(),
        energy_at: Some(at.into()),
        energy_wh: Some(wh),
        parking_at: None,
        parking: None,
    }
}

fn party(modules: &[&str]) -> Party {
    let endpoints: Vec<Value> = (modules.iter())
        .map(|m| json!({"identifier": m, "role": "RECEIVER", "url": format!("http://emsp/{m}")}))
        .collect();
    Party {
        id: 1,
        provider_id: 4,
        provider_uuid: "provider-uuid".into(),
        team_id: 1,
        country_code: "DE".into(),
        party_id: "EMP".into(),
        status: "registered".into(),
        outgoing_token: Some("B".into()),
        versions_url: None,
        endpoints: Some(Value::from(endpoints).to_string()),
        roles: None,
    }
}

#[test]
fn a_running_session_tells_the_energy_and_cost_so_far() {
    let mut t = transaction(true);
    t.latest_reading = Some(reading(2500, "2026-11-29T10:30:00Z"));
    let readings = [kept(2000, "2026-11-29T10:20:00.000000Z")];
    let running = cost("0.45", "0.54", "0");
    let s = session(&t, &running, &readings);
    assert_eq!(s.status, SessionStatus::Active);
    assert_eq!((s.kwh, s.end_date_time.as_deref()), (1.5, None));
    assert_eq!(s.start_date_time, "2026-11-29T10:00:00Z");
    let total = s.total_cost.expect("a running cost");
    assert_eq!((total.excl_vat, total.incl_vat), (0.45, Some(0.54)));
    assert_eq!(
        (s.id.as_str(), s.country_code.as_str()),
        (t.session_id.as_str(), "NL")
    );
    assert_eq!(
        (s.location_id.as_str(), s.evse_uid.as_str()),
        ("site-uuid", "charger-uuid")
    );
    assert_eq!(s.connector_id, "2");
    assert_eq!(s.cdr_token.uid, "ROAM-1");
    assert_eq!(
        (
            s.cdr_token.country_code.as_str(),
            s.cdr_token.party_id.as_str()
        ),
        ("DE", "EMP")
    );
    assert_eq!(s.auth_method, AuthMethod::Whitelist);
    assert_eq!(cdr(&t, &running), None, "no CDR while it runs");

    // A reading from before its start (the previous session's) is not this one's; a newer kept
    // register is.
    t.latest_reading = Some(reading(900_000, "2026-11-29T09:59:00Z"));
    assert_eq!(energy_wh(&t, &readings), 1000);
    assert_eq!(energy_wh(&t, &[]), 0);
    // Unpriced: no cost told (which is not "free").
    assert_eq!(session(&t, &Value::Null, &[]).total_cost, None);
}

#[test]
fn a_stopped_priced_session_makes_a_cdr_with_its_exact_cost() {
    let t = transaction(false);
    let final_cost = cost("2.70", "3.02", "0.25");
    let s = session(&t, &final_cost, &[]);
    assert_eq!(s.status, SessionStatus::Completed);
    assert_eq!(
        (s.kwh, s.end_date_time.as_deref()),
        (4.0, Some("2026-11-29T11:00:00Z"))
    );
    let cdr = cdr(&t, &final_cost).expect("a CDR");
    assert_eq!(
        (cdr.id.as_str(), cdr.session_id.as_deref()),
        (t.session_id.as_str(), Some(t.session_id.as_str()))
    );
    assert_eq!(
        (cdr.total_cost.excl_vat, cdr.total_cost.incl_vat),
        (2.70, Some(3.02))
    );
    assert_eq!((cdr.total_energy, cdr.total_time), (4.0, 1.0));
    assert_eq!(cdr.total_parking_time, Some(0.25));
    assert_eq!(cdr.total_energy_cost.map(|p| p.excl_vat), Some(1.20));
    assert_eq!(cdr.total_parking_cost.map(|p| p.excl_vat), Some(1.50));
    assert_eq!(cdr.currency, "EUR");
    assert_eq!(cdr.remark.as_deref(), Some("EVDisconnected"));
    let period = &cdr.charging_periods[0];
    let volumes: Vec<(&str, f64)> = (period.dimensions.iter())
        .map(|d| (d.dimension.as_str(), d.volume))
        .collect();
    assert_eq!(
        volumes,
        [("ENERGY", 4.0), ("TIME", 0.75), ("PARKING_TIME", 0.25)]
    );
    assert_eq!(period.tariff_id.as_deref(), Some("tariff-uuid"));

    let location = &cdr.cdr_location;
    assert_eq!(location.country, "NLD");
    assert_eq!(location.address.chars().count(), 45, "{}", location.address);
    assert_eq!(location.evse_id, "NL*CMS*ECP0042");
    assert_eq!(
        (
            location.connector_standard.as_str(),
            location.connector_format.as_str()
        ),
        ("IEC_62196_T2_COMBO", "SOCKET")
    );
    assert_eq!(location.connector_power_type, "AC_3_PHASE");
    assert_eq!(location.coordinates, None, "none known");

    // The tariff as OCPI writes it: numbers, the CPO's, its uuid, no nulls.
    let tariff = &cdr.tariffs[0];
    assert_eq!(tariff["id"], "tariff-uuid");
    assert_eq!(tariff["party_id"], "CMS");
    assert_eq!(tariff["last_updated"], "2026-11-01T08:00:00Z");
    assert_eq!(tariff["elements"][0]["price_components"][0]["price"], 0.3);
    assert_eq!(tariff["elements"][0]["price_components"][0]["vat"], 21);
    assert!(
        tariff["elements"][0]["price_components"][1]
            .get("vat")
            .is_none()
    );
    assert_eq!(tariff["max_price"], json!({"excl_vat": 50.0}));
    assert!(tariff.get("min_price").is_none());
}

#[test]
fn a_cdr_carries_the_stations_signed_readings_when_it_gave_any() {
    let mut t = transaction(false);
    let final_cost = cost("2.70", "3.02", "0.25");
    let unsigned = cdr(&t, &final_cost).expect("a CDR");
    assert_eq!(unsigned.signed_data, None);
    let serialized = serde_json::to_value(&unsigned).unwrap();
    assert!(serialized.get("signed_data").is_none(), "left out");
    let value = |nature: &str, plain: &str, key: Option<&str>| SignedValue {
        nature: nature.into(),
        plain_data: plain.into(),
        signed_data: format!("signed {nature}"),
        encoding_method: "EDL".into(),
        public_key: key.map(str::to_string),
    };
    t.signed_values = vec![
        value("Start", "0", None),
        value("End", "4000", Some("04AB")),
    ];
    let signed = cdr(&t, &final_cost).expect("a CDR").signed_data;
    assert_eq!(
        signed,
        Some(
            json!({"encoding_method": "EDL", "public_key": "04AB", "signed_values": [
            {"nature": "Start", "plain_data": "0", "signed_data": "signed Start"},
            {"nature": "End", "plain_data": "4000", "signed_data": "signed End"}]})
        )
    );
}

#[test]
fn an_unpriced_stop_waits_for_its_cost_and_one_without_a_tariff_is_free() {
    let mut t = transaction(false);
    assert_eq!(cdr(&t, &Value::Null), None, "the cost is not written yet");
    t.transaction.tariff = None;
    t.transaction.tariff_uuid = None;
    let free = cdr(&t, &Value::Null).expect("a CDR without a tariff");
    assert_eq!(
        (free.total_cost.excl_vat, free.total_cost.incl_vat),
        (0.0, Some(0.0))
    );
    assert!(free.tariffs.is_empty());
    assert_eq!(free.currency, super::objects::NO_TARIFF_CURRENCY);
}

#[test]
fn a_session_a_remote_start_began_was_the_commands() {
    let mut t = transaction(true);
    t.remote_start = Some(r#"{"connectorId":2,"idTag":"roam-1"}"#.into());
    t.remote_start_at = Some("2026-11-29T09:58:00.000000Z".into());
    assert_eq!(
        session(&t, &Value::Null, &[]).auth_method,
        AuthMethod::Command
    );
    // 2.0.1's RequestStartTransaction names an idToken.
    t.remote_start =
        Some(r#"{"remoteStartId":1,"idToken":{"idToken":"ROAM-1","type":"Central"}}"#.into());
    assert_eq!(
        session(&t, &Value::Null, &[]).auth_method,
        AuthMethod::Command
    );
    // Another tag's, or one long before.
    t.remote_start = Some(r#"{"idTag":"OTHER"}"#.into());
    assert_eq!(
        session(&t, &Value::Null, &[]).auth_method,
        AuthMethod::Whitelist
    );
    t.remote_start = Some(r#"{"idTag":"ROAM-1"}"#.into());
    t.remote_start_at = Some("2026-11-29T09:00:00.000000Z".into());
    assert_eq!(
        session(&t, &Value::Null, &[]).auth_method,
        AuthMethod::Whitelist
    );
}

#[test]
fn sessions_and_cdrs_go_to_the_modules_the_party_receives() {
    let t = transaction(false);
    let final_cost = cost("2.70", "3.02", "0");
    let s = session(&t, &final_cost, &[]);
    let cdr = cdr(&t, &final_cost).unwrap();
    let both = party(&["sessions", "cdrs"]);
    let put = put_session(&both, &s).expect("a PUT");
    assert_eq!(
        (put.module.as_str(), put.method.as_str(), put.path.as_str()),
        (
            "sessions",
            "PUT",
            "/NL/CMS/0d6f6b7e-5a3c-4f0e-9a51-2b1c3d4e5f60"
        )
    );
    assert_eq!(put.object_key, format!("session:{}", t.session_id));
    let body: Value = serde_json::from_str(put.body.as_deref().unwrap()).unwrap();
    assert_eq!(body["status"], "COMPLETED");
    let post = post_cdr(&both, &cdr).expect("a POST");
    assert_eq!(
        (
            post.module.as_str(),
            post.method.as_str(),
            post.path.as_str()
        ),
        ("cdrs", "POST", "")
    );
    assert_eq!(post.object_key, format!("cdr:{}", t.session_id));
    let body: Value = serde_json::from_str(post.body.as_deref().unwrap()).unwrap();
    assert_eq!(
        body["total_cost"],
        json!({"excl_vat": 2.7, "incl_vat": 3.02})
    );

    let pulls_only = party(&["locations"]);
    assert_eq!(put_session(&pulls_only, &s), None);
    assert_eq!(post_cdr(&pulls_only, &cdr), None);
}

#[test]
fn a_pushed_token_gives_its_type_contract_and_whether_its_emsp_was_asked() {
    let mut t = transaction(true);
    t.token = Some(
        json!({"uid": "ROAM-1", "type": "APP_USER", "contract_id": "NL-EMP-C12345678-X",
               "whitelist": "NEVER"})
        .to_string(),
    );
    t.latitude = Some("52.370216".into());
    t.longitude = Some("4.895168".into());
    let s = session(&t, &Value::Null, &[]);
    assert_eq!(s.cdr_token.token_type, "APP_USER");
    assert_eq!(s.cdr_token.contract_id, "NL-EMP-C12345678-X");
    assert_eq!(s.auth_method, AuthMethod::AuthRequest);
    t.token = Some(json!({"uid": "ROAM-1", "type": "RFID", "whitelist": "ALWAYS"}).to_string());
    let s = session(&t, &Value::Null, &[]);
    assert_eq!(
        (s.auth_method, s.cdr_token.contract_id.as_str()),
        (AuthMethod::Whitelist, "ROAM-1")
    );
    t.transaction.meter_stop = Some(2000);
    t.transaction.stopped_at = Some("2026-11-29T10:30:00.000000Z".into());
    t.transaction.tariff = None;
    let cdr = cdr(&t, &Value::Null).unwrap();
    let at = cdr
        .cdr_location
        .coordinates
        .expect("the site's coordinates");
    assert_eq!(
        (at.latitude.as_str(), at.longitude.as_str()),
        ("52.370216", "4.895168")
    );
}
