//! The calls cms makes to an OCPP 2.0.1 station, through the same REST API as 1.6's: taken for
//! the station's version and sent, answered and shown with it; an action of the other version
//! refused naming the charger's protocol; the base report asked for after a boot. The station
//! is a raw websocket client that writes its 2.0.1 frames by hand.

use crate::support::station201::RawStation201;
use crate::support::{Api, Charger, Cms, eventually};
use serde_json::{Value, json};

/// A registered 2.0.1 station, connected and booted, as the API shows it online; the operator's
/// client and the charger's uuid.
async fn booted_station(cms: &Cms, identity: &str) -> (RawStation201, Api, String) {
    let uuid = cms.add_charger(identity).await;
    let api = Api::new(cms, &cms.operator_token().await);
    let mut station = RawStation201::connect(cms.ocpp_addr(), identity).await;
    station.boot().await;
    api.wait_for_charger(&uuid, "online with OCPP 2.0.1", |c| {
        c["connection_status"] == "online" && c["ocpp_version"] == "2.0.1"
    })
    .await;
    (station, api, uuid)
}

/// The action `uuid` of the charger once it ended.
async fn ended(api: &Api, charger: &str, uuid: &str) -> Value {
    let path = format!("/api/v3/chargers/{charger}/actions/{uuid}");
    eventually(&format!("{path} ended"), async || {
        let action = api.get_ok(&path).await["data"].clone();
        match action["finished_at"].is_string() {
            true => Ok(action),
            false => Err(action.to_string()),
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_201_station_is_asked_for_its_base_report_after_boot_and_gets_a_reset_from_the_api() {
    let cms = Cms::up().await;
    let (mut station, api, uuid) = booted_station(&cms, "CS-ACT-201").await;

    // After its boot cms reads what the station holds: its whole base report.
    let read = station.call_from_cms("GetBaseReport").await;
    assert_eq!(read[3]["reportBase"], "FullInventory", "{read}");
    assert!(read[3]["requestId"].is_i64(), "a request id: {read}");
    station.answer(&read, json!({"status": "Accepted"})).await;

    // A 2.0.1 Reset, taken for the station's version and sent as 2.0.1's.
    let path = format!("/api/v3/chargers/{uuid}/actions/reset?wait=0");
    let taken = api
        .expect(202, "POST", &path, Some(&json!({"type": "Immediate"})))
        .await["data"]
        .clone();
    assert_eq!(
        (&taken["action"], &taken["ocpp_version"], &taken["status"]),
        (&json!("Reset"), &json!("2.0.1"), &json!("pending")),
        "{taken}"
    );
    let reset = station.call_from_cms("Reset").await;
    assert_eq!(
        reset[1], taken["uuid"],
        "the action's uuid is the message id"
    );
    assert_eq!(reset[3], json!({"type": "Immediate"}));
    station.answer(&reset, json!({"status": "Scheduled"})).await;

    let action = ended(&api, &uuid, taken["uuid"].as_str().unwrap()).await;
    assert_eq!(action["status"], "answered", "{action}");
    assert_eq!(action["response"], json!({"status": "Scheduled"}));
    assert_eq!(action["ocpp_version"], "2.0.1");

    // The command line takes them for the station's version too.
    let out = cms
        .cli(&[
            "charger",
            "action",
            "CS-ACT-201",
            "clear-cache",
            "{}",
            "--wait",
            "1",
        ])
        .await;
    assert_eq!(out.status.code(), Some(3), "still going: {}", out.stderr);
    let printed: Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(
        (&printed["action"], &printed["ocpp_version"]),
        (&json!("ClearCache"), &json!("2.0.1")),
        "{printed}"
    );
    let clear = station.call_from_cms("ClearCache").await;
    station.answer(&clear, json!({"status": "Accepted"})).await;
    let out = cms
        .cli(&[
            "charger",
            "action",
            "CS-ACT-201",
            "RemoteStartTransaction",
            r#"{"idTag":"T"}"#,
        ])
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", out.stderr);
    assert!(
        out.stderr.contains("this charger speaks OCPP 2.0.1"),
        "{}",
        out.stderr
    );

    // The audit log holds them, each as a 2.0.1 call.
    let log = api
        .get_ok(&format!("/api/v3/chargers/{uuid}/actions"))
        .await;
    let actions: Vec<(Value, Value)> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["action"].clone(), a["ocpp_version"].clone()))
        .collect();
    assert!(
        actions.contains(&(json!("GetBaseReport"), json!("2.0.1"))),
        "{log}"
    );
    assert!(actions.contains(&(json!("Reset"), json!("2.0.1"))), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_of_the_other_ocpp_version_is_a_422_that_names_the_chargers() {
    let cms = Cms::up().await;
    let (_station, api, v201) = booted_station(&cms, "CS-ACT-422").await;
    let v16 = cms.add_charger("CP-ACT-422").await;
    let _charger = Charger::connect_and_boot(&cms, "CP-ACT-422", "1.6.0").await;
    api.wait_for_charger(&v16, "online with OCPP 1.6", |c| c["ocpp_version"] == "1.6")
        .await;
    let post = |charger: &str, action: &str| format!("/api/v3/chargers/{charger}/actions/{action}");

    let start_16 = json!({"idTag": "TAG-1"});
    let errors = api
        .expect_invalid(
            "POST",
            &post(&v201, "remote-start-transaction"),
            Some(&start_16),
        )
        .await;
    assert_eq!(
        errors,
        json!({"action": ["remote-start-transaction is an OCPP 1.6 action; this charger speaks OCPP 2.0.1"]})
    );
    let start_201 =
        json!({"idToken": {"idToken": "TAG-1", "type": "ISO14443"}, "remoteStartId": 1});
    let errors = api
        .expect_invalid(
            "POST",
            &post(&v16, "request-start-transaction"),
            Some(&start_201),
        )
        .await;
    assert_eq!(
        errors,
        json!({"action": ["request-start-transaction is an OCPP 2.0.1 action; this charger speaks OCPP 1.6"]})
    );

    // The body is checked against the 2.0.1 schema, keyed by the field's path.
    let errors = api
        .expect_invalid(
            "POST",
            &post(&v201, "reset"),
            Some(&json!({"type": "Soft"})),
        )
        .await;
    assert!(errors["type"].is_array(), "{errors}");
    let no_id = json!({"idToken": {"idToken": "TAG-1", "type": "NoSuchType"}});
    let errors = api
        .expect_invalid(
            "POST",
            &post(&v201, "request-start-transaction"),
            Some(&no_id),
        )
        .await;
    assert!(errors["remoteStartId"].is_array(), "{errors}");
    assert!(errors["idToken.type"].is_array(), "{errors}");

    // A name of neither version (SetNetworkProfile is out of the Core calls) is 404.
    for charger in [&v201, &v16] {
        let gone = api
            .expect(
                404,
                "POST",
                &post(charger, "set-network-profile"),
                Some(&json!({})),
            )
            .await;
        assert!(gone["message"].is_string(), "{gone}");
    }
    // Nothing of it was taken.
    let log = api
        .get_ok(&format!("/api/v3/chargers/{v201}/actions"))
        .await;
    let taken: Vec<&Value> = log["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| &a["action"])
        .collect();
    assert!(!taken.contains(&&json!("RequestStartTransaction")), "{log}");
}
