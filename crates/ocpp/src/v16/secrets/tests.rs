use super::*;
use serde_json::json;

#[test]
fn secret_keys_are_those_whose_name_ends_in_a_credential() {
    for secret in [
        "AuthorizationKey",
        "authorizationkey",
        "BackOfficeAuthorizationKey",
        "BasicAuthPassword",
        "WifiPassword",
        "MqttPasswd",
        "ModemPassphrase",
        "ProxySecret",
        "TlsPrivateKey",
        "WlanPSK",
    ] {
        assert!(is_secret_key(secret), "{secret}");
    }
    for plain in [
        "HeartbeatInterval",
        "PasswordPolicy",
        "SecretLength",
        "TlsPublicKey",
        "SecurityProfile",
        "GetConfigurationMaxKeys",
        "Key",
        "",
    ] {
        assert!(!is_secret_key(plain), "{plain}");
    }
}

#[test]
fn a_change_of_a_secret_key_is_masked_and_others_are_left_alone() {
    let mut secret =
        json!({"key": "AuthorizationKey", "value": "3132333435363738393031323334353637383930"});
    assert!(mask_request("ChangeConfiguration", &mut secret));
    assert_eq!(secret, json!({"key": "AuthorizationKey", "value": "***"}));
    let mut plain = json!({"key": "HeartbeatInterval", "value": "60"});
    assert!(!mask_request("ChangeConfiguration", &mut plain));
    assert_eq!(plain["value"], "60");
    let mut other = json!({"key": "AuthorizationKey", "value": "x"});
    assert!(
        !mask_request("DataTransfer", &mut other),
        "not a configuration change"
    );
}

#[test]
fn a_configuration_read_shows_no_secret_value() {
    let mut answer = json!({"configurationKey": [
        {"key": "HeartbeatInterval", "readonly": false, "value": "300"},
        {"key": "AuthorizationKey", "readonly": false, "value": "s3cret-s3cret-s3cret"},
        {"key": "WifiPassword", "readonly": false}
    ], "unknownKey": []});
    mask_response("GetConfiguration", &mut answer);
    assert_eq!(answer["configurationKey"][0]["value"], "300");
    assert_eq!(answer["configurationKey"][1]["value"], "***");
    assert!(
        answer["configurationKey"][2].get("value").is_none(),
        "a key reported without a value stays so"
    );
}
