//! How an action's end becomes the CommandResult an eMSP is sent.

use super::*;

fn ended(action: &str, status: &str, response: Option<&str>) -> FinishedCommand {
    FinishedCommand {
        id: 7,
        provider_id: 3,
        command: "START_SESSION".into(),
        response_url: "https://emsp.example/commands/START_SESSION/7".into(),
        action: action.into(),
        status: status.into(),
        response: response.map(str::to_string),
        error_code: None,
        error_description: None,
    }
}

fn result(action: &str, station_status: &str) -> CommandResultType {
    let answer = format!(r#"{{"status":"{station_status}"}}"#);
    result_of(&ended(action, "answered", Some(&answer))).result
}

#[test]
fn each_station_answer_is_the_result_the_spec_names_for_it() {
    use CommandResultType::*;
    let cases = [
        ("RemoteStartTransaction", "Accepted", Accepted),
        ("RemoteStartTransaction", "Rejected", Rejected),
        ("RequestStartTransaction", "Accepted", Accepted),
        ("RemoteStopTransaction", "Rejected", Rejected),
        ("RequestStopTransaction", "Accepted", Accepted),
        ("UnlockConnector", "Unlocked", Accepted),
        ("UnlockConnector", "UnlockFailed", Failed),
        ("UnlockConnector", "NotSupported", NotSupported),
        (
            "UnlockConnector",
            "OngoingAuthorizedTransaction",
            EvseOccupied,
        ),
        ("UnlockConnector", "UnknownConnector", Rejected),
        ("ReserveNow", "Accepted", Accepted),
        ("ReserveNow", "Occupied", EvseOccupied),
        ("ReserveNow", "Faulted", EvseInoperative),
        ("ReserveNow", "Unavailable", EvseInoperative),
        ("ReserveNow", "Rejected", Rejected),
        ("CancelReservation", "Accepted", Accepted),
        ("CancelReservation", "Rejected", UnknownReservation),
        ("RemoteStartTransaction", "Maybe", Failed),
    ];
    for (action, status, expected) in cases {
        assert_eq!(result(action, status), expected, "{action} {status}");
    }
    let answer = r#"{"status":"Rejected","statusInfo":{"reasonCode":"TxInProgress"}}"#;
    let rejected = result_of(&ended("RequestStartTransaction", "answered", Some(answer)));
    assert_eq!(rejected.result, Rejected);
    assert_eq!(
        rejected.message[0].text,
        "The charge point answered RequestStartTransaction: Rejected (TxInProgress)."
    );
}

#[test]
fn an_action_without_an_answer_is_a_timeout_or_a_failure() {
    use CommandResultType::*;
    let timed_out = result_of(&ended("UnlockConnector", "timed_out", None));
    assert_eq!(timed_out.result, Timeout);
    assert_eq!(
        result_of(&ended("ReserveNow", "expired", None)).result,
        Timeout
    );
    let mut failed = ended("UnlockConnector", "failed", None);
    failed.error_code = Some("InternalError".into());
    failed.error_description = Some("the lock is stuck".into());
    let told = result_of(&failed);
    assert_eq!(told.result, Failed);
    assert_eq!(
        told.message[0].text,
        "The charge point answered with the error InternalError: the lock is stuck"
    );
    failed.error_code = Some("NotImplemented".into());
    assert_eq!(result_of(&failed).result, NotSupported);
    let answered_without_a_body = ended("RemoteStartTransaction", "answered", None);
    assert_eq!(result_of(&answered_without_a_body).result, Failed);
}
