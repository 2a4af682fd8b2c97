//! Each call a command becomes, in both versions, is what the official schema of its version
//! takes.

use super::*;
use crate::control::actions::validate_request;

fn valid(call: &(ActionName, Value)) {
    let (action, request) = call;
    assert!(
        validate_request(action, request).is_ok(),
        "{} {request} breaks its schema",
        action.as_str()
    );
}

#[test]
fn a_start_is_the_remote_start_of_the_chargers_version() {
    let v16 = start(OcppVersion::V16, "APP-0001", Some(2), 41);
    valid(&v16);
    assert_eq!(v16.0.as_str(), "RemoteStartTransaction");
    assert_eq!(v16.1, json!({"idTag": "APP-0001", "connectorId": 2}));
    let anywhere = start(OcppVersion::V16, "APP-0001", None, 41);
    assert_eq!(anywhere.1, json!({"idTag": "APP-0001"}));

    let v201 = start(
        OcppVersion::V201,
        "APP-0001-LONGER-THAN-TWENTY",
        Some(1),
        41,
    );
    valid(&v201);
    assert_eq!(v201.0.as_str(), "RequestStartTransaction");
    assert_eq!(
        v201.1,
        json!({"idToken": {"idToken": "APP-0001-LONGER-THAN-TWENTY", "type": "Central"},
               "evseId": 1, "remoteStartId": 41})
    );
    valid(&start(OcppVersion::V201, "APP-0001", None, 42));
}

#[test]
fn a_stop_names_the_transaction_as_the_charger_knows_it() {
    let v16 = stop(OcppVersion::V16, 1234, None).unwrap();
    valid(&v16);
    assert_eq!(
        (v16.0.as_str(), v16.1),
        ("RemoteStopTransaction", json!({"transactionId": 1234}))
    );
    let v201 = stop(OcppVersion::V201, -7, Some("tx-station-9")).unwrap();
    valid(&v201);
    assert_eq!(
        (v201.0.as_str(), v201.1),
        (
            "RequestStopTransaction",
            json!({"transactionId": "tx-station-9"})
        )
    );
    assert_eq!(stop(OcppVersion::V201, -7, None), None);
}

#[test]
fn an_unlock_names_the_connector_or_the_evse_and_its_connector() {
    let v16 = unlock(OcppVersion::V16, 2, 1);
    valid(&v16);
    assert_eq!(v16.1, json!({"connectorId": 2}));
    let v201 = unlock(OcppVersion::V201, 2, 3);
    valid(&v201);
    assert_eq!(v201.1, json!({"evseId": 2, "connectorId": 3}));
}
