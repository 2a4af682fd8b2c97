//! In `cms up`, what the REST API answered is in force at the gateway of the same process from
//! the answer on: a charger registered (201) connects at once, and a new password (200) is the
//! one the gateway checks at once. No retry and no sleep between the answer and the handshake.
//! A charger added by another process (`cms charger add`) connects as soon as that command has
//! exited: the gateway reads the change log again before it answers an unknown identity 404.

use crate::support::rest::operators_site;
use crate::support::{Api, Handshake, on_both_stores};
use serde_json::json;

fn site_chargers_path(site_uuid: &str) -> String {
    format!("/api/v3/sites/{site_uuid}/chargers")
}

on_both_stores!(
    a_charger_registered_through_the_api_connects_at_once,
    |cms| {
        cms.add_charger("CP-SEED").await;
        let api = Api::new(&cms, &cms.operator_token().await);
        let path = site_chargers_path(&operators_site(&api).await);
        // Several in a row: each handshake follows its 201 by a millisecond or so, well inside the
        // gateway's poll of the change log, so that no registration is connectable by luck.
        for n in 1..=3 {
            let identity = format!("CP-AT-ONCE-{n}");
            let password = format!("at-once-Pa55word-{n}");
            let body = json!({"identity": identity, "password": password});
            api.expect(201, "POST", &path, Some(&body)).await;
            let connected = Handshake::new(&cms, &identity)
                .basic_auth(&identity, &password)
                .open()
                .await;
            assert!(
                connected.is_ok(),
                "{identity} was refused right after its 201: {:?}",
                connected.err()
            );
        }
    }
);

on_both_stores!(a_new_password_is_in_force_at_once, |cms| {
    cms.add_charger("CP-SEED").await;
    let api = Api::new(&cms, &cms.operator_token().await);
    let path = site_chargers_path(&operators_site(&api).await);
    let first = "first-Pa55word-at-once";
    let body = json!({"identity": "CP-NEW-PASS", "password": first});
    let created = api.expect(201, "POST", &path, Some(&body)).await;
    let uuid = created["data"]["uuid"].as_str().expect("uuid").to_string();
    cms.wait_until_known("CP-NEW-PASS").await;
    let security = format!("/api/v3/chargers/{uuid}/security");
    for n in 1..=3 {
        let password = format!("next-Pa55word-at-once-{n}");
        let body = json!({"security_profile": 1, "password": password});
        api.expect(200, "PUT", &security, Some(&body)).await;
        let connected = Handshake::new(&cms, "CP-NEW-PASS")
            .basic_auth("CP-NEW-PASS", &password)
            .open()
            .await;
        assert!(
            connected.is_ok(),
            "the new password was refused right after its 200: {:?}",
            connected.err()
        );
    }
    let old = Handshake::new(&cms, "CP-NEW-PASS")
        .basic_auth("CP-NEW-PASS", first)
        .refused_status()
        .await;
    assert_eq!(old, 401, "the first password is refused");
});

on_both_stores!(
    a_charger_added_from_the_command_line_connects_when_the_command_exits,
    |cms| {
        cms.add_charger("CP-SEED").await;
        // Several in a row, each handshake right after its command exits: well inside a poll.
        for n in 1..=3 {
            let identity = format!("CP-CLI-AT-ONCE-{n}");
            let added = cms
                .cli(&[
                    "charger",
                    "add",
                    "--identity",
                    &identity,
                    "--security-profile",
                    "0",
                ])
                .await;
            assert!(added.status.success(), "{}", added.stderr);
            let connected = Handshake::new(&cms, &identity).open().await;
            assert!(
                connected.is_ok(),
                "{identity} was refused right after `cms charger add` exited: {:?}",
                connected.err()
            );
        }
        let stranger = Handshake::new(&cms, "CP-NEVER-ADDED")
            .refused_status()
            .await;
        assert_eq!(
            stranger, 404,
            "an identity never registered is still unknown"
        );
    }
);
