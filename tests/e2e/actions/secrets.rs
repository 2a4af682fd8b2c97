//! A charger's secrets are write-only (docs/actions.md, "Secrets"): its password goes to it
//! through `PUT .../security`, never as a setting, and becomes cms's only once the charger
//! takes it; other secret keys are changed, and shown as `***`.

use crate::support::commanded::CommandedCharger;

use crate::support::{Api, Cms, Handshake, eventually};
use serde_json::{Value, json};

/// The charger's password as registered, and the one a rotation tries to give it.
const OLD: &str = "old-password-0123";
const NEW: &str = "new-password-4567";

/// The password as the whitepaper has it sent: hex-encoded.
fn hex(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02X}")).collect()
}

/// A charger of security profile 1 with password [`OLD`], its charge point connected with it
/// (reporting `config`), and the operator's client.
async fn connected(cms: &Cms, identity: &str, config: Value) -> (String, CommandedCharger, Api) {
    let uuid = cms.add_charger_with(identity, &["--password", OLD]).await;
    let api = Api::new(cms, &cms.operator_token().await);
    let url = cms.ocpp_url(identity);
    let config = config.to_string();
    let options = ["--password", OLD, "--config", &config];
    let charger = CommandedCharger::connect_with(&url, identity, &options).await;
    let settings = format!("/api/v3/chargers/{uuid}/settings");
    eventually("the configuration read after the boot", async || {
        let data = api.get_ok(&settings).await["data"].clone();
        match data.as_array().is_some_and(|d| !d.is_empty()) {
            true => Ok(()),
            false => Err(data.to_string()),
        }
    })
    .await;
    (uuid, charger, api)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_the_charger_refuses_leaves_the_old_one_working() {
    let cms = Cms::up().await;
    let identity = "CP-SECRET-REFUSED";
    // A read-only AuthorizationKey: the charge point answers Rejected.
    let config = json!({"AuthorizationKey": {"value": hex(OLD), "readonly": true}});
    let (uuid, mut charger, api) = connected(&cms, identity, config).await;

    let path = format!("/api/v3/chargers/{uuid}/security?wait=20");
    let answer = api
        .expect(200, "PUT", &path, Some(&json!({"password": NEW})))
        .await;
    assert_eq!(answer["rotation"]["status"], "Rejected", "{answer}");
    assert!(
        answer.get("password").is_none(),
        "given, not generated: {answer}"
    );
    charger
        .wait_received(
            "ChangeConfiguration",
            &json!({"key": "AuthorizationKey", "value": hex(NEW)}),
        )
        .await;

    // The old password still lets the charger in; the new one never did.
    let url = cms.ocpp_url(identity);
    let refused = Handshake::at(&url)
        .basic_auth(identity, NEW)
        .refused_status();
    assert_eq!(refused.await, 401, "the password the charger refused");
    charger.disconnect().await;
    charger.connect_to(&url).await;
    charger.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_settings_are_write_only_and_the_password_is_no_setting() {
    let cms = Cms::up().await;
    let identity = "CP-SECRET-SETTINGS";
    let config = json!({"AuthorizationKey": hex(OLD), "WifiPassword": "wifi-as-shipped"});
    let (uuid, mut charger, api) = connected(&cms, identity, config).await;
    let path = format!("/api/v3/chargers/{uuid}/settings");

    let change = json!({"settings": {"WifiPassword": "wifi-s3cret-42"}});
    let changed = api
        .expect(200, "PUT", &format!("{path}?wait=20"), Some(&change))
        .await;
    assert_eq!(changed["data"][0]["status"], "Accepted", "{changed}");
    charger
        .wait_received(
            "ChangeConfiguration",
            &json!({"key": "WifiPassword", "value": "wifi-s3cret-42"}),
        )
        .await;
    let shown = api.get_ok(&path).await;
    let value = |key: &str| {
        let data = shown["data"].as_array().cloned().unwrap_or_default();
        let found = data.into_iter().find(|s| s["key"] == key);
        found.unwrap_or_else(|| panic!("{key} in {shown}"))["value"].clone()
    };
    assert_eq!(value("WifiPassword"), "***");
    assert_eq!(value("AuthorizationKey"), "***", "the charger's own read");
    assert_eq!(value("HeartbeatInterval"), "300", "a plain key shows");

    // The password is no setting; the mask is no value.
    let password = json!({"settings": {"AuthorizationKey": hex(NEW)}});
    let errors = api.expect_invalid("PUT", &path, Some(&password)).await;
    let why = errors["settings.AuthorizationKey"][0]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("/security"),
        "points to PUT .../security: {errors}"
    );
    let mask = json!({"settings": {"WifiPassword": "***"}});
    let errors = api.expect_invalid("PUT", &path, Some(&mask)).await;
    assert!(errors.get("settings.WifiPassword").is_some(), "{errors}");
    let action = format!("/api/v3/chargers/{uuid}/actions/change-configuration");
    let direct = json!({"key": "authorizationkey", "value": hex(NEW)});
    let errors = api.expect_invalid("POST", &action, Some(&direct)).await;
    assert!(errors.get("key").is_some(), "{errors}");

    // What the log shows of it all.
    let log = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/actions"))
        .await
        .to_string();
    let (old, new) = (hex(OLD), hex(NEW));
    for secret in [
        "wifi-s3cret-42",
        "wifi-as-shipped",
        old.as_str(),
        new.as_str(),
    ] {
        assert!(!log.contains(secret), "{secret} in the action log: {log}");
        assert!(!cms.log().contains(secret), "{secret} in the log of cms up");
    }
    assert_eq!(
        charger.received_of("ChangeConfiguration").len(),
        1,
        "nothing refused was sent"
    );
    charger.finish().await;
}
