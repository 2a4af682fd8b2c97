use super::*;
use serde_json::json;

const V16: OcppVersion = OcppVersion::V16;
const V201: OcppVersion = OcppVersion::V201;

#[test]
fn by_default_a_leader_may_not_touch_the_local_list_the_charging_profiles_or_certificates() {
    let calls = LeaderCalls::default();
    for command in v16::Command::ALL {
        let left_out = NOT_BY_DEFAULT.contains(&command.as_str());
        assert_eq!(calls.allows(command), !left_out, "{command:?}");
    }
    for command in v201::Command::ALL {
        let left_out = NOT_BY_DEFAULT.contains(&command.as_str());
        assert_eq!(calls.allows_v201(command), !left_out, "{command:?}");
    }
    for version in [V16, V201] {
        let refused = calls.refusal(version, "ClearChargingProfile", &json!({}));
        assert_eq!(refused.map(|r| r.0), Some(ErrorCode::SecurityError));
    }
    let refused = calls.refusal(V201, "InstallCertificate", &json!({}));
    assert_eq!(refused.map(|r| r.0), Some(ErrorCode::SecurityError));
    assert_eq!(calls.refusal(V16, "Reset", &json!({"type": "Soft"})), None);
    assert_eq!(
        calls.refusal(V201, "Reset", &json!({"type": "OnIdle"})),
        None
    );
}

#[test]
fn a_security_key_is_never_changed_whatever_its_case_or_the_list() {
    let everything = LeaderCalls::parse(&all_names().join(",")).unwrap();
    for key in ["AuthorizationKey", "securityprofile", " CPONAME "] {
        let request = json!({"key": key, "value": "x"});
        let (code, why) = everything
            .refusal(V16, "ChangeConfiguration", &request)
            .expect(key);
        assert_eq!(code, ErrorCode::SecurityError);
        assert!(why.contains("security setting"), "{why}");
    }
    let heartbeat = json!({"key": "HeartbeatInterval", "value": "60"});
    assert_eq!(
        everything.refusal(V16, "ChangeConfiguration", &heartbeat),
        None
    );
}

#[test]
fn a_201_security_variable_or_the_stations_network_choice_is_never_set() {
    let everything = LeaderCalls::parse(&all_names().join(",")).unwrap();
    let set = |component: &str, variable: &str| {
        json!({"setVariableData": [
            {"component": {"name": "OCPPCommCtrlr"}, "variable": {"name": "HeartbeatInterval"},
             "attributeValue": "60"},
            {"component": {"name": component}, "variable": {"name": variable},
             "attributeValue": "x"}]})
    };
    for (component, variable) in [
        ("SecurityCtrlr", "BasicAuthPassword"),
        ("securityctrlr", "OrganizationName"),
        ("OCPPCommCtrlr", "networkConfigurationPriority"),
    ] {
        let (code, why) = everything
            .refusal(V201, "SetVariables", &set(component, variable))
            .expect(variable);
        assert_eq!(code, ErrorCode::SecurityError);
        assert!(why.contains(&format!("{component}.{variable}")), "{why}");
    }
    let heartbeat = set("OCPPCommCtrlr", "HeartbeatInterval");
    assert_eq!(everything.refusal(V201, "SetVariables", &heartbeat), None);
}

#[test]
fn the_flag_reads_names_of_either_version_or_none_and_says_what_it_does_not_know() {
    let calls = LeaderCalls::parse(" Reset , UnlockConnector, RequestStartTransaction").unwrap();
    assert_eq!(
        calls.to_string(),
        "Reset,UnlockConnector,RequestStartTransaction"
    );
    assert!(calls.allows(v16::Command::Reset) && calls.allows_v201(v201::Command::Reset));
    assert!(!calls.allows(v16::Command::RemoteStartTransaction));
    assert_eq!(LeaderCalls::parse(&calls.to_string()), Ok(calls));
    assert_eq!(LeaderCalls::parse("none"), Ok(LeaderCalls::NONE));
    assert_eq!(LeaderCalls::NONE.to_string(), "none");
    let default = LeaderCalls::default().to_string();
    assert_eq!(LeaderCalls::parse(&default), Ok(LeaderCalls::default()));
    let unknown = LeaderCalls::parse("Reset,reset").unwrap_err();
    assert!(unknown.contains("\"reset\" is not a call"), "{unknown}");
    assert!(LeaderCalls::parse("Reset,").is_err(), "an empty name");
    // A name of the other version only is not the charger's call: never relayed to it.
    let (code, _) = LeaderCalls::default()
        .refusal(V16, "RequestStartTransaction", &json!({}))
        .unwrap();
    assert_eq!(code, ErrorCode::NotImplemented);
    let (code, _) = LeaderCalls::default()
        .refusal(V201, "RemoteStartTransaction", &json!({}))
        .unwrap();
    assert_eq!(code, ErrorCode::NotImplemented);
    // A 2.0.1 call cms never makes (it would change where the station connects): refused.
    let (code, _) = LeaderCalls::default()
        .refusal(V201, "SetNetworkProfile", &json!({}))
        .unwrap();
    assert_eq!(code, ErrorCode::SecurityError);
}

#[test]
fn by_default_a_leader_may_not_touch_the_chargers_certificates() {
    // Whom the charger trusts, and the certificate it shows cms, are cms's: a leader that
    // installed a root or signed the charger's key could take it over.
    let calls = LeaderCalls::default();
    for (version, call) in [
        (V16, "CertificateSigned"),
        (V16, "DeleteCertificate"),
        (V16, "InstallCertificate"),
        (V201, "CertificateSigned"),
        (V201, "DeleteCertificate"),
        (V201, "InstallCertificate"),
    ] {
        let refused = calls.refusal(version, call, &json!({}));
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
        assert_eq!(calls.refusal(V16, call, &json!({})), None, "{call}");
    }
}
