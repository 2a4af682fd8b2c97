use super::*;
use serde_json::json;

#[test]
fn by_default_a_leader_may_not_touch_the_local_list_or_the_charging_profiles() {
    let calls = LeaderCalls::default();
    for command in Command::ALL {
        assert_eq!(
            calls.allows(command),
            !NOT_BY_DEFAULT.contains(&command),
            "{command:?}"
        );
    }
    let refused = calls.refusal("ClearChargingProfile", &json!({}));
    assert_eq!(refused.map(|r| r.0), Some(ErrorCode::SecurityError));
    assert_eq!(calls.refusal("Reset", &json!({"type": "Soft"})), None);
}

#[test]
fn a_security_key_is_never_changed_whatever_its_case_or_the_list() {
    let everything = LeaderCalls::parse(&Command::ALL.map(|c| c.as_str()).join(",")).unwrap();
    for key in ["AuthorizationKey", "securityprofile", " CPONAME "] {
        let request = json!({"key": key, "value": "x"});
        let (code, why) = everything
            .refusal("ChangeConfiguration", &request)
            .expect(key);
        assert_eq!(code, ErrorCode::SecurityError);
        assert!(why.contains("security key"), "{why}");
    }
    let heartbeat = json!({"key": "HeartbeatInterval", "value": "60"});
    assert_eq!(everything.refusal("ChangeConfiguration", &heartbeat), None);
}

#[test]
fn the_flag_reads_names_or_none_and_says_what_it_does_not_know() {
    let calls = LeaderCalls::parse(" Reset , UnlockConnector").unwrap();
    assert_eq!(calls.to_string(), "Reset,UnlockConnector");
    assert_eq!(LeaderCalls::parse(&calls.to_string()), Ok(calls));
    assert_eq!(LeaderCalls::parse("none"), Ok(LeaderCalls::NONE));
    assert_eq!(LeaderCalls::NONE.to_string(), "none");
    let default = LeaderCalls::default().to_string();
    assert_eq!(LeaderCalls::parse(&default), Ok(LeaderCalls::default()));
    let unknown = LeaderCalls::parse("Reset,reset").unwrap_err();
    assert!(unknown.contains("\"reset\" is not a call"), "{unknown}");
    assert!(LeaderCalls::parse("Reset,").is_err(), "an empty name");
    // A call a charger makes, or none of OCPP 1.6's, is never relayed to the charger.
    let (code, _) = LeaderCalls::default()
        .refusal("SetVariables", &json!({}))
        .unwrap();
    assert_eq!(code, ErrorCode::NotImplemented);
}

#[test]
fn by_default_a_leader_may_not_touch_the_chargers_certificates() {
    // Whom the charger trusts, and the certificate it shows cms, are cms's: a leader that
    // installed a root or signed the charger's key could take it over.
    let calls = LeaderCalls::default();
    for call in [
        "CertificateSigned",
        "DeleteCertificate",
        "InstallCertificate",
    ] {
        let refused = calls.refusal(call, &json!({}));
        assert_eq!(
            refused.map(|r| r.0),
            Some(ErrorCode::SecurityError),
            "{call}"
        );
    }
    // Reading them, a log or a signed firmware update are the charger's running, as their
    // core counterparts are.
    for call in [
        "GetInstalledCertificateIds",
        "GetLog",
        "ExtendedTriggerMessage",
        "SignedUpdateFirmware",
    ] {
        assert_eq!(calls.refusal(call, &json!({})), None, "{call}");
    }
    let listed = LeaderCalls::parse("InstallCertificate").unwrap();
    assert_eq!(listed.refusal("InstallCertificate", &json!({})), None);
}
