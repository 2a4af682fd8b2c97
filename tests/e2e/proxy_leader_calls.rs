//! What a leader proxy server may make a relayed charger do (docs/proxy.md, "The leader's
//! calls"): only the calls of `--relay-leader-calls`, never a change of the charger's security
//! keys. A refused call is answered `SecurityError` and never reaches the charger. The leader is
//! the Python `ocpp` central system, the charger the Python `ocpp` charge point.
//!
//! Needs `python3` with the packages of tests/interop/requirements.txt (scripts/test installs
//! them); without them the tests fail, never skip.

use crate::proxy::{
    LEADER_TRANSACTION, Upstreams, boot_answer, relaying_cms_with, server, set_proxy,
};
use crate::support::central_system::CentralSystem;
use crate::support::commanded::CommandedCharger;
use crate::support::{Api, Cms};
use serde_json::{Value, json};
use std::time::Duration;

/// A leader, `cms up` with `options`, and its charger booted through the leader.
async fn led_charger(
    upstreams: &Upstreams,
    identity: &str,
    options: &[&str],
) -> (CentralSystem, Cms, Api, CommandedCharger) {
    let leader = upstreams.leader(LEADER_TRANSACTION).await;
    let (cms, uuid, api) = relaying_cms_with(upstreams, identity, options).await;
    let servers = json!([server(&leader, "leader")]);
    set_proxy(&api, &uuid, "ROLE_FOLLOWER", servers).await;
    // The gateway learns the set-up from the registry a few times a second.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let mut charger = CommandedCharger::connect(&cms.ocpp_url(identity), identity).await;
    let boot = boot_answer(&mut charger).await;
    assert_eq!(
        boot["interval"], 77,
        "the leader answers the charger: {boot}"
    );
    (leader, cms, api, charger)
}

/// A charging profile that would replace the site's grid limit on the whole charger.
fn charger_wide_limit() -> Value {
    json!({"connectorId": 0, "csChargingProfiles": {
        "chargingProfileId": 1, "stackLevel": 9,
        "chargingProfilePurpose": "ChargePointMaxProfile", "chargingProfileKind": "Absolute",
        "chargingSchedule": {"chargingRateUnit": "A",
            "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 63.0}]}}})
}

/// Sends `action` from the leader and checks that cms refused it with `SecurityError`.
async fn refused_code(leader: &mut CentralSystem, identity: &str, action: &str, payload: &Value) {
    let sent = leader.call(identity, action, payload).await;
    assert_eq!(
        sent["error"][0], "SecurityError",
        "{action} {payload} from the leader: {sent}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_cannot_change_the_chargers_security_lists_or_charging_limits() {
    let upstreams = Upstreams::new();
    let identity = "CP-LEADER-CALLS";
    let (mut leader, _cms, _api, mut charger) = led_charger(&upstreams, identity, &[]).await;

    let refused = [
        ("ClearChargingProfile", json!({})),
        ("SetChargingProfile", charger_wide_limit()),
        (
            "SendLocalList",
            json!({"listVersion": 7, "updateType": "Full", "localAuthorizationList": []}),
        ),
        (
            "ChangeConfiguration",
            json!({"key": "AuthorizationKey", "value": "0011223344556677889900112233445566778899"}),
        ),
        // Keys are told apart without regard to case, as many chargers read them.
        (
            "ChangeConfiguration",
            json!({"key": "securityprofile", "value": "0"}),
        ),
    ];
    for (action, payload) in &refused {
        refused_code(&mut leader, identity, action, payload).await;
    }

    // What the list keeps still reaches the charger, and its answer comes back.
    let heartbeat = json!({"key": "HeartbeatInterval", "value": "120"});
    let sent = leader
        .call(identity, "ChangeConfiguration", &heartbeat)
        .await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    charger
        .wait_received("ChangeConfiguration", &heartbeat)
        .await;
    let sent = leader
        .call(identity, "Reset", &json!({"type": "Soft"}))
        .await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    charger
        .wait_received("Reset", &json!({"type": "Soft"}))
        .await;

    // None of the refused calls reached it: the only ChangeConfiguration is the allowed one.
    for action in [
        "ClearChargingProfile",
        "SetChargingProfile",
        "SendLocalList",
    ] {
        assert_eq!(charger.received_of(action), Vec::<Value>::new(), "{action}");
    }
    let changes = charger.received_of("ChangeConfiguration");
    assert_eq!(changes.len(), 1, "{changes:?}");
    charger.finish().await;
    leader.finish().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_chooses_the_calls_a_leader_may_send() {
    let upstreams = Upstreams::new();
    let identity = "CP-LEADER-LIST";
    let options = ["--relay-leader-calls", "Reset,ClearChargingProfile"];
    let (mut leader, _cms, _api, mut charger) = led_charger(&upstreams, identity, &options).await;

    // Listed: sent, even one the default list leaves out.
    let sent = leader
        .call(identity, "ClearChargingProfile", &json!({}))
        .await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    charger
        .wait_received("ClearChargingProfile", &json!({}))
        .await;
    // Not listed: refused, even one the default list has.
    let unlock = json!({"connectorId": 1});
    refused_code(&mut leader, identity, "UnlockConnector", &unlock).await;
    let heartbeat = json!({"key": "HeartbeatInterval", "value": "120"});
    refused_code(&mut leader, identity, "ChangeConfiguration", &heartbeat).await;
    let sent = leader
        .call(identity, "Reset", &json!({"type": "Hard"}))
        .await;
    assert_eq!(sent["answer"], json!({"status": "Accepted"}), "{sent}");
    charger
        .wait_received("Reset", &json!({"type": "Hard"}))
        .await;
    assert_eq!(charger.received_of("UnlockConnector"), Vec::<Value>::new());
    assert_eq!(
        charger.received_of("ChangeConfiguration"),
        Vec::<Value>::new()
    );
    charger.finish().await;
    leader.finish().await;
}
