//! Abuse cases of registering chargers: a customer registering an identity that is not theirs
//! (a charger preconfigured with its serial number, not yet registered by its owner) must never
//! get that charger unauthenticated, and the owner claims it through the platform operators.

use crate::support::rest::{create_site, operators_site, uuid_of};
use crate::support::{Api, Handshake, eventually, on_both_stores};
use serde_json::json;
use std::time::Duration;

const PROFILE_0_REFUSED: &str = "The security profile field must be between 1 and 3: profile 0 \
    (no credentials) is for the platform operators only.";
const TAKEN_BY_ANOTHER_TEAM: &str = "The identity has already been taken by another team. If \
    the charger is yours, ask the platform operators to move it to your site.";

fn site_chargers(site: &str) -> String {
    format!("/api/v3/sites/{site}/chargers")
}

on_both_stores!(
    only_platform_operators_register_chargers_without_credentials,
    |cms| {
        cms.add_charger("CP-SEED").await;
        let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
        let site = uuid_of(&create_site(&stranger, "Squat").await);
        let open = json!({"identity": "SERIAL-0001", "security_profile": 0});
        let errors = stranger
            .expect_invalid("POST", &site_chargers(&site), Some(&open))
            .await;
        assert_eq!(errors, json!({"security_profile": [PROFILE_0_REFUSED]}));

        // At profile 1 (a password of the stranger's), the real charger connecting without
        // credentials is refused: it never lands in the stranger's team.
        let created = stranger
            .expect(
                201,
                "POST",
                &site_chargers(&site),
                Some(&json!({"identity": "SERIAL-0001"})),
            )
            .await;
        let uuid = uuid_of(&created["data"]);
        let password = created["password"].as_str().expect("a generated password");
        eventually("the charger to be known with its password", async || {
            Handshake::new(&cms, "SERIAL-0001")
                .basic_auth("SERIAL-0001", password)
                .open()
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .await;
        assert_eq!(
            Handshake::new(&cms, "SERIAL-0001").refused_status().await,
            401
        );

        // Nor can it be opened afterwards.
        let security = format!("/api/v3/chargers/{uuid}/security");
        let errors = stranger
            .expect_invalid("PUT", &security, Some(&json!({"security_profile": 0})))
            .await;
        assert_eq!(errors, json!({"security_profile": [PROFILE_0_REFUSED]}));
        let shown = stranger.get_ok(&format!("/api/v3/chargers/{uuid}")).await;
        assert_eq!(shown["data"]["security_profile"], 1, "{shown}");
        assert_eq!(
            Handshake::new(&cms, "SERIAL-0001").refused_status().await,
            401
        );

        // The platform operators keep their test benches.
        let operator = Api::new(&cms, &cms.operator_token().await);
        let bench = json!({"identity": "BENCH-1", "security_profile": 0});
        let ops_site = operators_site(&operator).await;
        operator
            .expect(201, "POST", &site_chargers(&ops_site), Some(&bench))
            .await;
    }
);

on_both_stores!(
    an_identity_taken_by_a_stranger_is_claimed_through_the_operators,
    |cms| {
        let squatter = Api::new(&cms, &cms.guest_token("squatter@example.com").await);
        let squat = uuid_of(&create_site(&squatter, "Squat").await);
        let body = json!({"identity": "SERIAL-0002", "password": "the-squatters-password"});
        let created = squatter
            .expect(201, "POST", &site_chargers(&squat), Some(&body))
            .await;
        let uuid = uuid_of(&created["data"]);

        // The owner cannot register it again, and is told how to claim it.
        let owner = Api::new(&cms, &cms.guest_token("owner@example.com").await);
        let depot = uuid_of(&create_site(&owner, "Depot").await);
        let errors = owner
            .expect_invalid(
                "POST",
                &site_chargers(&depot),
                Some(&json!({"identity": "SERIAL-0002"})),
            )
            .await;
        assert_eq!(errors, json!({"identity": [TAKEN_BY_ANOTHER_TEAM]}));
        // Its own charger again is merely taken.
        let again = squatter
            .expect_invalid(
                "POST",
                &site_chargers(&squat),
                Some(&json!({"identity": "SERIAL-0002"})),
            )
            .await;
        assert_eq!(
            again,
            json!({"identity": ["The identity has already been taken."]})
        );

        // The operators, having checked, move it to the owner's site with new credentials.
        let since = std::time::Instant::now();
        let moved = cms
            .cli(&[
                "charger",
                "move",
                "--identity",
                "SERIAL-0002",
                "--site",
                &depot,
            ])
            .await;
        assert!(moved.status.success(), "{}", moved.stderr);
        assert_eq!(moved.last_line(), uuid, "{}", moved.stdout);
        let password = moved
            .stdout
            .lines()
            .find(|l| l.contains("shown only once"))
            .and_then(|l| l.split_whitespace().last())
            .unwrap_or_else(|| panic!("a new password: {}", moved.stdout))
            .to_string();
        assert_eq!(password.len(), 32, "{}", moved.stdout);

        let path = format!("/api/v3/chargers/{uuid}");
        squatter
            .wait_for_status(&path, 404, since, Duration::from_secs(5))
            .await;
        owner
            .wait_for_status(&path, 200, since, Duration::from_secs(5))
            .await;
        let shown = owner.get_ok(&path).await;
        assert_eq!(shown["data"]["permissions"]["full"], true, "{shown}");
        eventually("the new password to be taken", async || {
            Handshake::new(&cms, "SERIAL-0002")
                .basic_auth("SERIAL-0002", &password)
                .open()
                .await
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .await;
        let old = Handshake::new(&cms, "SERIAL-0002")
            .basic_auth("SERIAL-0002", "the-squatters-password")
            .refused_status()
            .await;
        assert_eq!(old, 401, "the squatter's password no longer works");

        // A site or charger that does not exist is an error, and changes nothing.
        let no_site = "00000000-0000-4000-8000-000000000000";
        let nowhere = cms
            .cli(&[
                "charger",
                "move",
                "--identity",
                "SERIAL-0002",
                "--site",
                no_site,
            ])
            .await;
        assert!(!nowhere.status.success());
        assert!(nowhere.stderr.contains("no site"), "{}", nowhere.stderr);
        assert_eq!(owner.get(&path).await.status, 200);
    }
);
