//! The mapping of sites, chargers and connectors to OCPI's Location, EVSE and Connector.

use super::*;
use serde_json::json;

fn cpo() -> CpoFacts {
    CpoFacts {
        country_code: "NL".into(),
        party_id: "CMS".into(),
        name: "Charging Co".into(),
        website: Some("https://charging.example".into()),
    }
}

fn site() -> SiteFacts {
    SiteFacts {
        uuid: "site-1".into(),
        name: "Station".into(),
        street: "Stationsplein".into(),
        house_number: 12,
        house_number_addition: Some("A".into()),
        postal_code: "1012 AB".into(),
        city: "Amsterdam".into(),
        country: "nl".into(),
        time_zone: "Europe/Amsterdam".into(),
        latitude: "52.37403".into(),
        longitude: "4.88969".into(),
        parking_type: Some("ON_STREET".into()),
        facilities: vec!["CAFE".into()],
        opening_times: None,
        last_updated: "2026-11-21T10:00:00.000000Z".into(),
    }
}

fn connector(id: i64, status: &str) -> ConnectorFacts {
    ConnectorFacts {
        connector_id: id,
        status: status.into(),
        standard: None,
        format: None,
        power_type: None,
        max_voltage: None,
        max_amperage: None,
        updated_at: "2026-11-21T09:00:00.000000Z".into(),
    }
}

fn charger(connection: &str, connectors: Vec<ConnectorFacts>) -> EvseFacts {
    EvseFacts {
        uuid: "charger-1".into(),
        identity: "cp-0042.a".into(),
        reference: Some("Left".into()),
        connection_status: connection.into(),
        charger_status: None,
        max_current: None,
        connectors,
        last_updated: "2026-11-21T09:30:00.000000Z".into(),
    }
}

#[test]
fn a_site_is_a_location_with_the_cpos_identity_and_the_address_on_one_line() {
    let facts = LocationFacts {
        cpo: cpo(),
        site: site(),
        tariff_uuid: Some("tariff-1".into()),
        evses: vec![charger("online", vec![connector(1, "Available")])],
    };
    let location = serde_json::to_value(location(&facts)).unwrap();
    assert_eq!(location["country_code"], "NL");
    assert_eq!(location["party_id"], "CMS");
    assert_eq!(location["id"], "site-1");
    assert_eq!(location["publish"], true);
    assert_eq!(location["address"], "Stationsplein 12A");
    assert_eq!(location["postal_code"], "1012 AB");
    assert_eq!(location["country"], "NLD", "alpha-3");
    assert_eq!(
        location["coordinates"],
        json!({"latitude": "52.37403", "longitude": "4.88969"})
    );
    assert_eq!(location["opening_times"], json!({"twentyfourseven": true}));
    assert_eq!(location["operator"]["name"], "Charging Co");
    assert_eq!(location["facilities"], json!(["CAFE"]));
    assert_eq!(location["last_updated"], "2026-11-21T10:00:00Z");
    let evse = &location["evses"][0];
    assert_eq!(evse["uid"], "charger-1");
    assert_eq!(evse["evse_id"], "NL*CMS*ECP0042A");
    assert_eq!(evse["status"], "AVAILABLE");
    assert_eq!(evse["physical_reference"], "Left");
    let connector = &evse["connectors"][0];
    assert_eq!(connector["id"], "1");
    assert_eq!(connector["tariff_ids"], json!(["tariff-1"]));
    assert_eq!(connector["last_updated"], "2026-11-21T09:00:00Z");
}

#[test]
fn connectors_take_ocpi_names_and_defaults_for_what_cms_does_not_know() {
    let mut dc = connector(2, "Available");
    dc.power_type = Some("dc".into());
    dc.max_amperage = Some(200);
    let mut typed = connector(1, "Available");
    typed.standard = Some("Type 2".into());
    typed.format = Some("tethered".into());
    typed.power_type = Some("AC_1_PHASE".into());
    let mut evse_facts = charger("online", vec![typed, dc, connector(3, "Available")]);
    evse_facts.max_current = Some(32.0);
    let evse = evse(&cpo(), &evse_facts, None);
    let [typed, dc, plain] = &evse.connectors[..] else {
        panic!("three connectors: {evse:?}");
    };
    assert_eq!(
        (typed.standard.as_str(), typed.format.as_str()),
        ("IEC_62196_T2", "CABLE")
    );
    assert_eq!(typed.power_type, "AC_1_PHASE");
    assert_eq!(
        (
            typed.max_voltage,
            typed.max_amperage,
            typed.max_electric_power
        ),
        (230, 32, 230 * 32)
    );
    assert_eq!(
        (
            dc.standard.as_str(),
            dc.format.as_str(),
            dc.power_type.as_str()
        ),
        ("IEC_62196_T2_COMBO", "CABLE", "DC")
    );
    assert_eq!((dc.max_voltage, dc.max_amperage), (400, 200));
    assert_eq!(
        (
            plain.standard.as_str(),
            plain.format.as_str(),
            plain.power_type.as_str()
        ),
        ("IEC_62196_T2", "SOCKET", "AC_3_PHASE")
    );
    assert_eq!(plain.max_electric_power, 3 * 230 * 32);
    assert!(plain.tariff_ids.is_empty());
    assert_eq!(
        connectors::standard(Some("iec_60309_2_three_32"), "AC_3_PHASE"),
        "IEC_60309_2_three_32"
    );
}

#[test]
fn a_charger_without_connectors_shows_one_of_the_defaults() {
    let evse = evse(&cpo(), &charger("never_seen", vec![]), Some("t"));
    assert_eq!(evse.status, EvseStatus::Planned);
    assert_eq!(evse.connectors.len(), 1);
    assert_eq!(evse.connectors[0].id, "1");
    assert_eq!(evse.connectors[0].tariff_ids, vec!["t".to_string()]);
}

#[test]
fn the_evse_status_follows_the_connection_then_the_charger_then_its_connectors() {
    use EvseStatus::*;
    let of = status::of_charger;
    assert_eq!(of("offline", None, &["Charging"]), Unknown);
    assert_eq!(of("never_seen", None, &[]), Planned);
    assert_eq!(of("online", Some("Faulted"), &["Available"]), Outoforder);
    assert_eq!(
        of("online", Some("Unavailable"), &["Available"]),
        Inoperative
    );
    assert_eq!(of("online", None, &["Available", "SuspendedEV"]), Charging);
    assert_eq!(of("online", None, &["Available", "Preparing"]), Charging);
    assert_eq!(of("online", None, &["Finishing"]), Charging);
    assert_eq!(of("online", None, &["Available", "Reserved"]), Reserved);
    assert_eq!(of("online", None, &["Faulted", "Available"]), Available);
    assert_eq!(of("online", None, &["Faulted", "Unavailable"]), Inoperative);
    assert_eq!(of("online", None, &["Faulted"]), Outoforder);
    assert_eq!(of("online", None, &["Whatever"]), Unknown);
    assert_eq!(of("online", Some("Available"), &[]), Available);
    assert_eq!(of("online", None, &[]), Unknown);
    assert_eq!(
        serde_json::to_value(Outoforder).unwrap(),
        json!("OUTOFORDER")
    );
}

#[test]
fn an_evse_id_keeps_capitals_and_digits_and_fits_48_characters() {
    assert_eq!(evse_id("NL", "CMS", "cp-1", "u"), "NL*CMS*ECP1");
    assert_eq!(
        evse_id("NL", "CMS", "--", "4b1f2e3d-0000"),
        "NL*CMS*E4B1F2E3D0000"
    );
    let long = evse_id("NL", "CMS", &"x".repeat(100), "u");
    assert_eq!(long.len(), 48);
    assert!(long.starts_with("NL*CMS*EXXX"));
}

#[test]
fn countries_coordinates_and_opening_hours_are_checked_as_ocpi_wants_them() {
    assert_eq!(alpha_3("DE"), "DEU");
    assert_eq!(alpha_3("be"), "BEL");
    assert!(is_alpha_2("nl") && !is_alpha_2("XX") && !is_alpha_2("NLD"));
    assert!(is_latitude("52.37403") && is_latitude("-9.1234567"));
    assert!(!is_latitude("52.3740") && !is_latitude("91.00000") && !is_latitude("152.00000"));
    assert!(!is_latitude("52,37403") && !is_latitude("+52.37403"));
    assert!(is_longitude("-179.12345") && !is_longitude("181.00000"));
    assert!(hours_problems(&json!({"twentyfourseven": true})).is_empty());
    let weekdays = json!({"twentyfourseven": false, "regular_hours": [
        {"weekday": 1, "period_begin": "08:00", "period_end": "20:00"}]});
    assert!(hours_problems(&weekdays).is_empty());
    let bad = json!({"twentyfourseven": false, "regular_hours": [
        {"weekday": 8, "period_begin": "24:00", "period_end": "20:00"}],
        "exceptional_closings": [{"period_begin": "soon", "period_end": "2026-12-25T00:00:00Z"}],
        "extra": 1});
    let paths: Vec<String> = hours_problems(&bad).into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        paths,
        [
            "extra",
            "regular_hours.0.weekday",
            "regular_hours.0.period_begin",
            "exceptional_closings.0.period_begin"
        ]
    );
    let closed = json!({"twentyfourseven": false});
    assert_eq!(hours_problems(&closed)[0].0, "regular_hours");
}
