//! The commands' objects as an eMSP sends them, and what cms answers.

use super::*;
use serde_json::json;

fn token() -> Value {
    json!({"country_code": "NL", "party_id": "EMP", "uid": "APP-0001", "type": "APP_USER",
           "contract_id": "NL-EMP-C00000001", "issuer": "The eMSP", "valid": true,
           "whitelist": "ALLOWED", "last_updated": "2026-11-29T10:00:00Z"})
}

fn start() -> StartSession {
    serde_json::from_value(json!({
        "response_url": "https://emsp.example/commands/START_SESSION/1",
        "token": token(), "location_id": "LOC1", "evse_uid": "EVSE1", "connector_id": "1",
    }))
    .unwrap()
}

#[test]
fn commands_are_named_as_the_spec_spells_them() {
    for command in CommandType::ALL {
        assert_eq!(CommandType::parse(command.as_str()), Some(command));
        let named: CommandType = serde_json::from_value(json!(command.as_str())).unwrap();
        assert_eq!(named, command);
    }
    assert_eq!(CommandType::parse("start_session"), None);
    assert_eq!(CommandType::parse("CHARGE_FASTER"), None);
}

#[test]
fn a_start_session_keeps_its_whole_token_and_is_checked_field_by_field() {
    let body = start();
    assert_eq!(body.problem(), None);
    assert_eq!(body.token.uid, "APP-0001");
    assert_eq!(body.token.token_type, "APP_USER");
    assert_eq!(body.token.rest["contract_id"], "NL-EMP-C00000001");
    let back = serde_json::to_value(&body).unwrap();
    assert_eq!(back["token"], token());

    let mut bad = start();
    bad.response_url = "ftp://emsp.example/x".into();
    assert!(bad.problem().unwrap().contains("response_url"));
    let mut bad = start();
    bad.token.uid = "x".repeat(37);
    assert!(bad.problem().unwrap().contains("token.uid"));
    let mut bad = start();
    bad.token.token_type = "CARD".into();
    assert!(bad.problem().unwrap().contains("token.type"));
    let mut bad = start();
    bad.location_id = String::new();
    assert!(bad.problem().unwrap().contains("location_id"));
    let mut bad = start();
    bad.evse_uid = None;
    assert!(bad.problem().unwrap().contains("evse_uid is required"));
    let mut bad = start();
    bad.connector_id = Some("\u{1}".into());
    assert!(bad.problem().unwrap().contains("connector_id"));
}

#[test]
fn a_body_without_a_required_field_does_not_read() {
    let missing = json!({"response_url": "https://e.example/r", "location_id": "L"});
    assert!(serde_json::from_value::<StartSession>(missing).is_err());
    let missing = json!({"response_url": "https://e.example/r"});
    assert!(serde_json::from_value::<StopSession>(missing).is_err());
    let wrong_type = json!({"response_url": "https://e.example/r", "session_id": 7});
    assert!(serde_json::from_value::<StopSession>(wrong_type).is_err());
    let missing = json!({"response_url": "https://e.example/r", "location_id": "L",
                         "evse_uid": "E"});
    assert!(serde_json::from_value::<UnlockConnector>(missing).is_err());
}

#[test]
fn a_reservation_needs_a_datetime_and_ids_within_bounds() {
    let body = json!({
        "response_url": "https://emsp.example/commands/RESERVE_NOW/9", "token": token(),
        "expiry_date": "2026-11-29T12:00:00Z", "reservation_id": "R-1", "location_id": "LOC1",
    });
    let reserve: ReserveNow = serde_json::from_value(body.clone()).unwrap();
    assert_eq!(reserve.problem(), None);
    assert_eq!(reserve.evse_uid, None);
    let mut bad = reserve.clone();
    bad.expiry_date = "tomorrow".into();
    assert!(bad.problem().unwrap().contains("expiry_date"));
    let mut bad = reserve;
    bad.reservation_id = "r".repeat(37);
    assert!(bad.problem().unwrap().contains("reservation_id"));

    let cancel: CancelReservation = serde_json::from_value(json!({
        "response_url": "http://emsp.example/c", "reservation_id": "R-1"}))
    .unwrap();
    assert_eq!(cancel.problem(), None);
    let stop: StopSession = serde_json::from_value(json!({
        "response_url": "http://emsp.example/c", "session_id": ""}))
    .unwrap();
    assert!(stop.problem().unwrap().contains("session_id"));
}

#[test]
fn answers_are_written_as_the_spec_spells_them() {
    let response =
        CommandResponse::new(CommandResponseType::UnknownSession, 30, "No such session.");
    assert_eq!(
        serde_json::to_value(&response).unwrap(),
        json!({"result": "UNKNOWN_SESSION", "timeout": 30,
               "message": [{"language": "en", "text": "No such session."}]})
    );
    let result = CommandResult {
        result: CommandResultType::EvseOccupied,
        message: Vec::new(),
    };
    assert_eq!(
        serde_json::to_value(&result).unwrap(),
        json!({"result": "EVSE_OCCUPIED"})
    );
    for (value, text) in [
        (
            CommandResultType::CanceledReservation,
            "CANCELED_RESERVATION",
        ),
        (CommandResultType::UnknownReservation, "UNKNOWN_RESERVATION"),
        (CommandResultType::EvseInoperative, "EVSE_INOPERATIVE"),
    ] {
        assert_eq!(value.as_str(), text);
        assert_eq!(serde_json::to_value(value).unwrap(), json!(text));
    }
    assert_eq!(CommandResponseType::NotSupported.as_str(), "NOT_SUPPORTED");
}
