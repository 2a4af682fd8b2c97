//! Chargers > Settings: the configuration read after each boot, and changes sent as one
//! ChangeConfiguration per key.

use super::{Bench, operator};
use crate::support::{assert_record_time, eventually, on_both_stores};
use serde_json::{Value, json};

/// `(key, value, readonly)` of each setting, in the order the API lists them.
fn settings(data: &Value) -> Vec<(String, Value, bool)> {
    let data = data
        .as_array()
        .unwrap_or_else(|| panic!("a data array: {data}"));
    for setting in data {
        assert_record_time(&setting["updated_at"], &format!("updated_at of {setting}"));
    }
    data.iter()
        .map(|s| {
            let key = s["key"].as_str().unwrap_or_default().to_string();
            (key, s["value"].clone(), s["readonly"] == true)
        })
        .collect()
}

fn setting(key: &str, value: Value, readonly: bool) -> (String, Value, bool) {
    (key.to_string(), value, readonly)
}

on_both_stores!(
    settings_show_the_configuration_read_at_boot_and_follow_accepted_changes,
    |cms| {
        let config = r#"{"MeterPublicKey": {"value": null, "readonly": true}}"#;
        let mut bench = Bench::start_with(&cms, "CP-ACT-SET", &["--config", config]).await;
        let path = format!("/api/v3/chargers/{}/settings", bench.uuid);
        let profiles = "Core,FirmwareManagement,LocalAuthListManagement,Reservation,SmartCharging,\
                    RemoteTrigger";
        let mut expected = vec![
            setting("AuthorizeRemoteTxRequests", json!("true"), false),
            setting("HeartbeatInterval", json!("300"), false),
            setting("MeterPublicKey", Value::Null, true),
            setting("MeterValueSampleInterval", json!("60"), false),
            setting("NumberOfConnectors", json!("2"), true),
            setting("SupportedFeatureProfiles", json!(profiles), true),
            setting("WebSocketPingInterval", json!("60"), false),
        ];
        let read = eventually("the configuration read after the boot", async || {
            let data = bench.api.get_ok(&path).await["data"].clone();
            match data.as_array().is_some_and(|d| !d.is_empty()) {
                true => Ok(data),
                false => Err(data.to_string()),
            }
        })
        .await;
        assert_eq!(
            settings(&read),
            expected,
            "by key, as the charger reported them"
        );
        let log = bench.audit_log(1).await;
        let boot_read = &log["data"][0];
        assert_eq!(boot_read["action"], "GetConfiguration", "{boot_read}");
        assert!(
            [json!({}), json!({"key": []})].contains(&boot_read["request"]),
            "the whole configuration, no keys asked: {boot_read}"
        );

        // A read-only key refuses the whole change before anything is sent.
        let refused = json!({"settings": {"HeartbeatInterval": "60", "NumberOfConnectors": "4"}});
        let errors = bench.api.expect_invalid("PUT", &path, Some(&refused)).await;
        assert!(
            errors.get("settings.NumberOfConnectors").is_some(),
            "{errors}"
        );
        assert!(
            errors.get("settings.HeartbeatInterval").is_none(),
            "{errors}"
        );
        for invalid in [
            json!({"settings": {}}),
            json!({"settings": {"K": "v".repeat(501)}}),
        ] {
            bench.api.expect_invalid("PUT", &path, Some(&invalid)).await;
        }

        let change =
            json!({"settings": {"HeartbeatInterval": "60", "WebSocketPingInterval": "30"}});
        let changed = bench
            .api
            .expect(200, "PUT", &format!("{path}?wait=10"), Some(&change))
            .await;
        let statuses: Vec<(&Value, &Value)> = changed["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|c| (&c["key"], &c["status"]))
            .collect();
        assert_eq!(
            statuses,
            [
                (&json!("HeartbeatInterval"), &json!("Accepted")),
                (&json!("WebSocketPingInterval"), &json!("RebootRequired"))
            ],
            "{changed}"
        );
        let first = changed["data"][0]["action"]
            .as_str()
            .expect("an action uuid");
        let action = bench
            .api
            .get_ok(&format!("{}/{first}", bench.actions_path()))
            .await["data"]
            .clone();
        assert_eq!(action["action"], "ChangeConfiguration", "{action}");
        assert_eq!(
            action["request"],
            json!({"key": "HeartbeatInterval", "value": "60"})
        );
        assert_eq!(action["response"], json!({"status": "Accepted"}));
        assert_eq!(action["requested_by"], operator());
        let sent: Vec<Value> = bench
            .charger
            .received_of("ChangeConfiguration")
            .into_iter()
            .map(|l| l["payload"].clone())
            .collect();
        assert_eq!(
            sent,
            [
                json!({"key": "HeartbeatInterval", "value": "60"}),
                json!({"key": "WebSocketPingInterval", "value": "30"})
            ],
            "one ChangeConfiguration per key, in order, none of the refused change"
        );

        let unknown = json!({"settings": {"NoSuchKey": "1"}});
        let answered = bench
            .api
            .expect(200, "PUT", &format!("{path}?wait=10"), Some(&unknown))
            .await;
        assert_eq!(answered["data"][0]["status"], "NotSupported", "{answered}");

        expected[1].1 = json!("60");
        expected[6].1 = json!("30");
        let now = settings(&bench.api.get_ok(&path).await["data"]);
        assert_eq!(
            now, expected,
            "the accepted values, nothing of the unknown key"
        );
        bench.charger.finish().await;
    }
);
