//! The Session and CDR objects of a party's transaction (cms_store::ocpi::sessions): what cms
//! serves on its sessions and cdrs endpoints and pushes to the party, from the transaction and
//! its cost as the REST API shows it (`cost`: currency, excl_vat, incl_vat, components).

use chrono::{DateTime, Utc};
use cms_ocpi::cdrs::{
    Cdr, CdrDimension, CdrLocation, CdrToken, ChargingPeriod, GeoLocation, Price, alpha3, cut,
    evse_id,
};
use cms_ocpi::sessions::{AuthMethod, Session, SessionStatus};
use cms_store::ocpi::sessions::OcpiTransaction;
use cms_store::signed_values::SignedValue;
use cms_store::transaction_readings::TransactionReading;
use serde_json::{Map, Value, json};

/// The currency of a session that took no tariff: OCPI wants one, and no tariff names it.
pub const NO_TARIFF_CURRENCY: &str = "EUR";

/// How long before cms heard of a transaction a remote start with its tag makes it the
/// command's (a charger waits for the car to be plugged in: ConnectionTimeOut, minutes).
const REMOTE_START_WINDOW_S: i64 = 600;

/// The transaction as an OCPI Session: ACTIVE while it runs, COMPLETED once stopped; `kwh`
/// the energy so far, `total_cost` the cost so far (absent without a tariff).
pub fn session(t: &OcpiTransaction, cost: &Value, readings: &[TransactionReading]) -> Session {
    let tx = &t.transaction;
    Session {
        country_code: t.cpo_country_code.clone(),
        party_id: t.cpo_party_id.clone(),
        id: t.session_id.clone(),
        start_date_time: ocpi_time(&tx.started_at),
        end_date_time: tx.stopped_at.as_deref().map(ocpi_time),
        kwh: kwh(energy_wh(t, readings)),
        cdr_token: cdr_token(t),
        auth_method: auth_method(t),
        authorization_reference: None,
        location_id: t.site_uuid.clone(),
        evse_uid: t.charger_uuid.clone(),
        connector_id: tx.connector_id.to_string(),
        meter_id: None,
        currency: currency(t, cost),
        total_cost: price(cost),
        status: match tx.stopped_at {
            None => SessionStatus::Active,
            Some(_) => SessionStatus::Completed,
        },
        last_updated: ocpi_time(&t.last_updated),
    }
}

/// The transaction's CDR, once it is one: stopped, and priced (or without a tariff, free).
pub fn cdr(t: &OcpiTransaction, cost: &Value) -> Option<Cdr> {
    let tx = &t.transaction;
    let stopped_at = tx.stopped_at.as_deref()?;
    let total_cost = match (price(cost), &tx.tariff) {
        (Some(total), _) => total,
        (None, None) => Price {
            excl_vat: 0.0,
            incl_vat: Some(0.0),
        },
        (None, Some(_)) => return None,
    };
    let total_ms = millis_between(&tx.started_at, stopped_at);
    let total_time = hours(total_ms);
    let parking_time = volume(cost, "PARKING_TIME").map(|h| h.min(total_time));
    let total_energy = kwh(energy_wh(t, &[]));
    let mut dimensions = vec![
        dimension("ENERGY", total_energy),
        dimension("TIME", round4(total_time - parking_time.unwrap_or(0.0))),
    ];
    if let Some(parking) = parking_time.filter(|h| *h > 0.0) {
        dimensions.push(dimension("PARKING_TIME", parking));
    }
    Some(Cdr {
        country_code: t.cpo_country_code.clone(),
        party_id: t.cpo_party_id.clone(),
        id: t.session_id.clone(),
        start_date_time: ocpi_time(&tx.started_at),
        end_date_time: ocpi_time(stopped_at),
        session_id: Some(t.session_id.clone()),
        cdr_token: cdr_token(t),
        auth_method: auth_method(t),
        authorization_reference: None,
        cdr_location: cdr_location(t),
        meter_id: None,
        currency: currency(t, cost),
        tariffs: tariff(t).into_iter().collect(),
        // One period: cms-tariffs keeps the periods it priced to itself.
        charging_periods: vec![ChargingPeriod {
            start_date_time: ocpi_time(&tx.started_at),
            dimensions,
            tariff_id: tx.tariff_uuid.clone(),
        }],
        signed_data: signed_data(&t.signed_values),
        total_cost,
        total_fixed_cost: component_cost(cost, "FLAT"),
        total_energy,
        total_energy_cost: component_cost(cost, "ENERGY"),
        total_time,
        total_time_cost: component_cost(cost, "TIME"),
        total_parking_time: Some(parking_time.unwrap_or(0.0)),
        total_parking_cost: component_cost(cost, "PARKING_TIME"),
        remark: tx.stop_reason.as_deref().map(|r| cut(r, 255)),
        last_updated: ocpi_time(&t.last_updated),
    })
}

/// The OCPI SignedData of the station's signed readings; `None` when it gave none. One
/// encoding and key for the CDR: the first reading's (a meter signs all of a transaction's
/// alike).
fn signed_data(values: &[SignedValue]) -> Option<Value> {
    let first = values.first()?;
    let mut data = Map::new();
    data.insert(
        "encoding_method".into(),
        json!(cut(&first.encoding_method, 36)),
    );
    if let Some(key) = values.iter().find_map(|v| v.public_key.as_deref()) {
        data.insert("public_key".into(), json!(key));
    }
    let signed: Vec<Value> = (values.iter())
        .map(|v| json!({"nature": v.nature, "plain_data": v.plain_data, "signed_data": v.signed_data}))
        .collect();
    data.insert("signed_values".into(), Value::Array(signed));
    Some(Value::Object(data))
}

/// Wh charged: to the stop; while it runs, to the newest energy register read since its start
/// (the connector's newest reading, or the newest a priced transaction kept).
pub fn energy_wh(t: &OcpiTransaction, readings: &[TransactionReading]) -> i64 {
    let tx = &t.transaction;
    let register = match tx.meter_stop {
        Some(stop) => stop,
        None => {
            let started = parse(&tx.started_at);
            let latest = (t.latest_reading.as_deref())
                .and_then(register_of)
                .filter(|(at, _)| started.is_some_and(|s| *at >= s));
            let kept = (readings.iter())
                .filter(|r| r.transaction_id == tx.id)
                .filter_map(|r| Some((parse(r.energy_at.as_deref()?)?, r.energy_wh?)))
                .max_by_key(|(at, _)| *at);
            match (latest, kept) {
                (Some(a), Some(b)) => a.max(b).1,
                (a, b) => a.or(b).map_or(tx.meter_start, |(_, wh)| wh),
            }
        }
    };
    (register - tx.meter_start).max(0)
}

/// kWh, as OCPI gives energy: 1500 Wh is 1.5.
pub fn kwh(wh: i64) -> f64 {
    wh as f64 / 1000.0
}

/// The newest whole-outlet `Energy.Active.Import.Register` of a REST `meterValue` array (Wh).
fn register_of(json: &str) -> Option<(DateTime<Utc>, i64)> {
    let values: Vec<Value> = serde_json::from_str(json).ok()?;
    values
        .iter()
        .filter_map(|v| {
            let at = parse(v["timestamp"].as_str()?)?;
            let wh = (v["sampledValue"].as_array()?.iter()).find_map(|s| {
                let whole = s["measurand"] == "Energy.Active.Import.Register"
                    && s.get("phase").is_none_or(Value::is_null)
                    && s["location"] == "Outlet"
                    && s["format"] == "Raw";
                let per_wh = match s["unit"].as_str()? {
                    "Wh" => 1.0,
                    "kWh" => 1000.0,
                    _ => return None,
                };
                let value: f64 = s["value"].as_str()?.parse().ok().filter(|_| whole)?;
                Some((value * per_wh).round() as i64)
            })?;
            Some((at, wh))
        })
        .max_by_key(|(at, _)| *at)
}

/// The eMSP's Token for the session's tag, when it pushed one.
fn token(t: &OcpiTransaction) -> Value {
    (t.token.as_deref())
        .and_then(|body| serde_json::from_str(body).ok())
        .unwrap_or(Value::Null)
}

/// The tag as the eMSP's token: its type and contract id when the eMSP pushed it as a Token,
/// else an RFID card whose contract id is its uid.
fn cdr_token(t: &OcpiTransaction) -> CdrToken {
    let token = token(t);
    let uid = &t.transaction.id_tag;
    CdrToken {
        country_code: t.emsp_country_code.clone(),
        party_id: t.emsp_party_id.clone(),
        uid: uid.clone(),
        token_type: token["type"].as_str().unwrap_or("RFID").into(),
        contract_id: token["contract_id"].as_str().unwrap_or(uid).into(),
    }
}

/// COMMAND when cms sent the charger a remote start with the session's tag shortly before it
/// began; AUTH_REQUEST for a token whose whitelist has the gateway ask its eMSP (NEVER,
/// ALLOWED_OFFLINE); else WHITELIST.
fn auth_method(t: &OcpiTransaction) -> AuthMethod {
    let asked = matches!(
        token(t)["whitelist"].as_str(),
        Some("NEVER" | "ALLOWED_OFFLINE")
    );
    let otherwise = match asked {
        true => AuthMethod::AuthRequest,
        false => AuthMethod::Whitelist,
    };
    let tx = &t.transaction;
    let (Some(request), Some(at)) = (&t.remote_start, &t.remote_start_at) else {
        return otherwise;
    };
    let request: Value = serde_json::from_str(request).unwrap_or(Value::Null);
    let tag = (request["idTag"].as_str()).or(request["idToken"]["idToken"].as_str());
    let same_tag = tag.is_some_and(|tag| tag.eq_ignore_ascii_case(&tx.id_tag));
    let soon_after = (parse(at).zip(parse(&tx.created_at)))
        .is_some_and(|(sent, heard)| (heard - sent).num_seconds() <= REMOTE_START_WINDOW_S);
    if same_tag && soon_after {
        AuthMethod::Command
    } else {
        otherwise
    }
}

fn cdr_location(t: &OcpiTransaction) -> CdrLocation {
    let number = match &t.house_number_addition {
        Some(addition) => format!("{} {addition}", t.house_number),
        None => t.house_number.to_string(),
    };
    let connector = |given: &Option<String>, allowed: &[&str], default: &str| {
        (given.as_deref().map(str::to_ascii_uppercase))
            .filter(|g| allowed.contains(&g.as_str()) || (allowed.is_empty() && is_enum(g)))
            .unwrap_or_else(|| default.to_string())
    };
    CdrLocation {
        id: t.site_uuid.clone(),
        name: Some(cut(&t.site_name, 255)),
        address: cut(&format!("{} {number}", t.street), 45),
        city: cut(&t.city, 45),
        postal_code: Some(cut(&t.postal_code, 10)).filter(|p| !p.is_empty()),
        country: alpha3(&t.country)
            .map(str::to_string)
            .unwrap_or_else(|| t.country.to_ascii_uppercase()),
        coordinates: (t.latitude.clone().zip(t.longitude.clone())).map(|(latitude, longitude)| {
            GeoLocation {
                latitude,
                longitude,
            }
        }),
        evse_uid: t.charger_uuid.clone(),
        evse_id: evse_id(&t.cpo_country_code, &t.cpo_party_id, &t.charger_identity),
        connector_id: t.transaction.connector_id.to_string(),
        connector_standard: connector(&t.connector_standard, &[], "IEC_62196_T2"),
        connector_format: connector(&t.connector_format, &["SOCKET", "CABLE"], "SOCKET"),
        connector_power_type: connector(
            &t.connector_power_type,
            &[
                "AC_1_PHASE",
                "AC_2_PHASE",
                "AC_2_PHASE_SPLIT",
                "AC_3_PHASE",
                "DC",
            ],
            "AC_3_PHASE",
        ),
    }
}

/// Looks like an OCPI enumeration value (`IEC_62196_T2`).
fn is_enum(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The tariff the transaction took, as an OCPI Tariff: prices and limits as numbers, the CPO's
/// identity, the tariff's uuid, and when its version took effect.
fn tariff(t: &OcpiTransaction) -> Option<Value> {
    let tx = &t.transaction;
    let mut body: Value = serde_json::from_str(tx.tariff.as_deref()?).ok()?;
    numbers(&mut body);
    let Value::Object(fields) = body else {
        return None;
    };
    let mut tariff = Map::new();
    tariff.insert("country_code".into(), t.cpo_country_code.clone().into());
    tariff.insert("party_id".into(), t.cpo_party_id.clone().into());
    tariff.insert("id".into(), tx.tariff_uuid.clone()?.into());
    tariff.extend(fields);
    let valid_from = t.tariff_valid_from.as_deref().unwrap_or(&tx.started_at);
    tariff.insert("last_updated".into(), ocpi_time(valid_from).into());
    Some(Value::Object(tariff))
}

/// cms keeps money as decimal strings; OCPI writes numbers. What is null (a VAT, a limit) is
/// left out, as OCPI leaves out what it does not know.
fn numbers(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            fields.retain(|_, v| !v.is_null());
            for (key, v) in fields.iter_mut() {
                let money = matches!(key.as_str(), "price" | "excl_vat" | "incl_vat");
                match v.as_str().and_then(|s| s.parse::<f64>().ok()) {
                    Some(n) if money => *v = json!(n),
                    _ => numbers(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(numbers),
        _ => {}
    }
}

fn price(cost: &Value) -> Option<Price> {
    let amount = |key: &str| cost[key].as_str()?.parse::<f64>().ok();
    Some(Price {
        excl_vat: amount("excl_vat")?,
        incl_vat: amount("incl_vat"),
    })
}

fn currency(t: &OcpiTransaction, cost: &Value) -> String {
    let tariff = (t.transaction.tariff.as_deref())
        .and_then(|body| serde_json::from_str::<Value>(body).ok())
        .and_then(|body| body["currency"].as_str().map(str::to_string));
    (cost["currency"].as_str().map(str::to_string))
        .or(tariff)
        .unwrap_or_else(|| NO_TARIFF_CURRENCY.into())
}

/// The cost component of `kind` (excluding VAT, before a min/max clamp of the total).
fn component_cost(cost: &Value, kind: &str) -> Option<Price> {
    let component = component(cost, kind)?;
    Some(Price {
        excl_vat: component["excl_vat"].as_str()?.parse().ok()?,
        incl_vat: None,
    })
}

/// The billed volume of the cost component of `kind`.
fn volume(cost: &Value, kind: &str) -> Option<f64> {
    component(cost, kind)?["volume"].as_str()?.parse().ok()
}

fn component<'a>(cost: &'a Value, kind: &str) -> Option<&'a Value> {
    (cost["components"].as_array()?.iter()).find(|c| c["type"] == kind)
}

fn dimension(kind: &str, volume: f64) -> CdrDimension {
    CdrDimension {
        dimension: kind.into(),
        volume,
    }
}

/// A record time as OCPI writes it (whole seconds, `Z`); as stored if it is none.
pub fn ocpi_time(record: &str) -> String {
    parse(record).map_or_else(|| record.to_string(), cms_ocpi::time::format)
}

fn parse(text: &str) -> Option<DateTime<Utc>> {
    cms_ocpi::time::parse(text)
}

fn millis_between(from: &str, to: &str) -> i64 {
    match (parse(from), parse(to)) {
        (Some(from), Some(to)) => (to - from).num_milliseconds().max(0),
        _ => 0,
    }
}

/// Hours of `ms` milliseconds, to OCPI's 4 decimals.
fn hours(ms: i64) -> f64 {
    round4(ms as f64 / 3_600_000.0)
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
