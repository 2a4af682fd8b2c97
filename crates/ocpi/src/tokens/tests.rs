use super::*;
use serde_json::json;

/// The spec's full RFID example.
fn full() -> Value {
    json!({
        "country_code": "DE",
        "party_id": "TNM",
        "uid": "12345678905880",
        "type": "RFID",
        "contract_id": "DE8ACC12E46L89",
        "visual_number": "DF000-2001-8999-1",
        "issuer": "TheNewMotion",
        "group_id": "DF000-2001-8999",
        "valid": true,
        "whitelist": "ALLOWED",
        "language": "it",
        "default_profile_type": "GREEN",
        "energy_contract": {"supplier_name": "Greenpeace Energy eG", "contract_id": "0123456789"},
        "last_updated": "2018-12-10T17:25:10Z"
    })
}

#[test]
fn the_specs_example_reads_and_writes_back_as_it_was() {
    let token = Token::from_json(full()).unwrap();
    assert_eq!(token.token_type, TokenType::Rfid);
    assert_eq!(token.whitelist, WhitelistType::Allowed);
    assert_eq!(serde_json::to_value(&token).unwrap(), full());
}

#[test]
fn a_missing_field_a_bad_enum_or_a_length_past_the_spec_is_named() {
    let without = |field: &str| {
        let mut body = full();
        body.as_object_mut().unwrap().remove(field);
        Token::from_json(body).unwrap_err()
    };
    for field in [
        "uid",
        "type",
        "contract_id",
        "issuer",
        "valid",
        "whitelist",
        "last_updated",
    ] {
        assert!(
            without(field).contains(field),
            "{field}: {}",
            without(field)
        );
    }
    let with = |field: &str, value: Value| {
        let mut body = full();
        body[field] = value;
        Token::from_json(body)
    };
    assert!(
        with("whitelist", json!("SOMETIMES"))
            .unwrap_err()
            .contains("SOMETIMES")
    );
    assert!(with("type", json!("rfid")).is_err(), "enums are upper case");
    assert!(
        with("uid", json!("x".repeat(37)))
            .unwrap_err()
            .contains("uid")
    );
    assert!(with("uid", json!("")).unwrap_err().contains("uid"));
    assert!(with("uid", json!("x".repeat(36))).is_ok());
    assert!(
        with("country_code", json!("DEU"))
            .unwrap_err()
            .contains("country_code")
    );
    assert!(
        with("party_id", json!("TN"))
            .unwrap_err()
            .contains("party_id")
    );
    assert!(
        with("issuer", json!("é".repeat(64))).is_ok(),
        "64 characters"
    );
    assert!(
        with("issuer", json!("é".repeat(65)))
            .unwrap_err()
            .contains("issuer")
    );
    assert!(
        with("group_id", json!("tab\there"))
            .unwrap_err()
            .contains("group_id")
    );
    assert!(
        with("language", json!("ita"))
            .unwrap_err()
            .contains("language")
    );
    assert!(
        with("last_updated", json!("yesterday"))
            .unwrap_err()
            .contains("yesterday")
    );
    assert!(with("valid", json!("yes")).is_err());
    assert!(Token::from_json(json!([1, 2])).is_err());
}

#[test]
fn a_patch_keeps_what_it_does_not_name_and_must_carry_last_updated() {
    let token = Token::from_json(full()).unwrap();
    let patched = token
        .patched(&json!({"valid": false, "last_updated": "2019-06-19T02:11:11Z"}))
        .unwrap();
    assert!(!patched.valid);
    assert_eq!(patched.issuer, token.issuer);
    assert_eq!(
        crate::time::format(patched.last_updated),
        "2019-06-19T02:11:11Z"
    );
    let err = token.patched(&json!({"valid": false})).unwrap_err();
    assert!(err.contains("last_updated"), "{err}");
    let err = token
        .patched(&json!({"whitelist": "MAYBE", "last_updated": "2019-06-19T02:11:11Z"}))
        .unwrap_err();
    assert!(err.contains("MAYBE"), "{err}");
    assert!(token.patched(&json!("valid")).is_err());
}

#[test]
fn enums_read_and_write_as_the_spec_spells_them() {
    for t in TokenType::ALL {
        assert_eq!(TokenType::parse(t.as_str()), Some(t));
        assert_eq!(serde_json::to_value(t).unwrap(), json!(t.as_str()));
    }
    for w in WhitelistType::ALL {
        assert_eq!(WhitelistType::parse(w.as_str()), Some(w));
        assert_eq!(serde_json::to_value(w).unwrap(), json!(w.as_str()));
    }
    assert_eq!(TokenType::parse("AD_HOC_USER"), Some(TokenType::AdHocUser));
    let asks: Vec<_> = WhitelistType::ALL
        .into_iter()
        .filter(|w| w.asks_in_real_time())
        .collect();
    assert_eq!(asks, [WhitelistType::AllowedOffline, WhitelistType::Never]);
    let info: AuthorizationInfo = serde_json::from_value(json!({
        "allowed": "NO_CREDIT", "token": full(), "authorization_reference": "ref-1"
    }))
    .unwrap();
    assert_eq!(info.allowed, AllowedType::NoCredit);
    let references = LocationReferences {
        location_id: "site".into(),
        evse_uids: vec!["charger".into()],
    };
    assert_eq!(
        serde_json::to_value(references).unwrap(),
        json!({"location_id": "site", "evse_uids": ["charger"]})
    );
}
