//! Sites > Teams over the REST API: invites and their acceptance, what a guest team sees
//! (basic, sensitive, listed assets), and what the owner team changes: sensitive data, assets,
//! removal and ownership.

use crate::support::rest::{accept_invite, create_site, invite, sorted_keys, uuid_of};
use crate::support::{Api, assert_ocpp_time, assert_record_time, on_both_stores};
use serde_json::{Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

const OWNER: &str = "operator@example.com";
const GUEST: &str = "guest@example.com";

/// The UTC date `days` from today, `YYYY-MM-DD` (days-to-civil, proleptic Gregorian).
fn date_in_days(days: i64) -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    let z = now / 86_400 + days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The caller's permissions on the site, from the sites list (`None`: not listed).
async fn site_permissions(api: &Api, site: &str) -> Option<Value> {
    let page = api.get_ok("/api/v3/sites").await;
    let sites = page["data"].as_array().expect("a data array");
    sites
        .iter()
        .find(|s| s["uuid"] == site)
        .map(|s| s["permissions"].clone())
}

fn permissions(basic: bool, sensitive: bool, full: bool) -> Option<Value> {
    Some(json!({"basic": basic, "sensitive": sensitive, "full": full}))
}

/// Every field of a team's access, with its type.
fn assert_access_shape(access: &Value) {
    assert_eq!(
        sorted_keys(access),
        [
            "accessible_assets",
            "can_access_all_assets",
            "created_at",
            "email",
            "id",
            "is_personal_team",
            "name",
            "role",
            "sensitive_data",
            "sensitive_data_expires_at",
            "sensitive_data_requested_at",
            "type",
            "updated_at",
            "uuid"
        ]
    );
    assert!(
        access["id"].is_i64() && access["uuid"].is_string(),
        "{access}"
    );
    assert!(
        access["name"].is_string() && access["type"].is_string(),
        "{access}"
    );
    assert!(access["is_personal_team"].is_boolean(), "{access}");
    assert!(access["sensitive_data"].is_boolean(), "{access}");
    assert!(access["can_access_all_assets"].is_boolean(), "{access}");
    assert!(access["accessible_assets"].is_array(), "{access}");
    assert!(["owner", "guest"].contains(&access["role"].as_str().unwrap_or("")));
    assert_record_time(&access["created_at"], "created_at");
}

on_both_stores!(
    an_invited_team_sees_what_the_invite_grants_until_it_is_removed,
    |cms| {
        let owner = Api::new(&cms, &cms.create_token(OWNER, None).await);
        let guest = Api::new(&cms, &cms.guest_token(GUEST).await);
        let site = uuid_of(&create_site(&owner, "Depot").await);
        let listed = cms.add_charger_with("CP-TEAM-A", &["--site", &site]).await;
        let unlisted = cms.add_charger_with("CP-TEAM-B", &["--site", &site]).await;
        let site_path = format!("/api/v3/sites/{site}");
        assert_eq!(
            guest.get(&site_path).await.status,
            404,
            "not before the invite"
        );
        assert_eq!(site_permissions(&guest, &site).await, None);
        assert_eq!(guest.charger(&listed).await, None);

        let body = json!({
            "email": GUEST, "data_access": true, "can_access_all_assets": false,
            "accessible_assets": [{"type": "charger", "uuid": listed}, null]
        });
        let created = owner
            .expect(
                201,
                "POST",
                &format!("{site_path}/teams/invite"),
                Some(&body),
            )
            .await;
        assert!(created["message"].is_string(), "{created}");
        let invite = &created["invite"];
        assert!(invite["id"].is_i64(), "{created}");
        assert_eq!(invite["email"], GUEST);
        assert_ocpp_time(&invite["expires_at"], "expires_at");
        assert!(invite["expires_at"].as_str().unwrap() > date_in_days(6).as_str());
        let token = invite["token"].as_str().expect("a token").to_string();
        assert_eq!(created["invite_token"], token);
        let web = created["invite_links"]["web"].as_str().expect("a web link");
        assert!(web.starts_with("http://127.0.0.1:"), "{web}");
        for part in [
            format!("site={site}"),
            "email=guest%40example.com".into(),
            format!("token={token}"),
        ] {
            assert!(web.contains(&part), "{web} lacks {part}");
        }
        let deep_link = created["invite_links"]["deep_link"]
            .as_str()
            .expect("a deep link");
        assert!(deep_link.contains(&format!("token={token}")), "{deep_link}");

        let access = accept_invite(&guest, &site, &token).await;
        assert_access_shape(&access);
        assert_eq!(
            (
                &access["role"],
                &access["sensitive_data"],
                &access["can_access_all_assets"]
            ),
            (&json!("guest"), &json!(true), &json!(false))
        );
        assert_eq!(
            access["accessible_assets"],
            json!([{"type": "charger", "uuid": listed}])
        );
        let guest_team = access["uuid"].as_str().unwrap().to_string();
        let team_path = format!("{site_path}/teams/{guest_team}");
        let again = guest
            .expect_invalid(
                "POST",
                &format!("{site_path}/teams/invite/accept"),
                Some(&json!({"token": token})),
            )
            .await;
        assert!(
            again.get("token").is_some(),
            "an invite is used once: {again}"
        );

        assert_eq!(
            site_permissions(&guest, &site).await,
            permissions(true, true, false)
        );
        assert_eq!(guest.get_ok(&site_path).await["data"]["chargers_count"], 1);
        let charger = guest.charger(&listed).await.expect("the listed charger");
        assert_eq!(
            charger["permissions"],
            permissions(true, true, false).unwrap()
        );
        assert_eq!(guest.charger(&unlisted).await, None, "not listed: hidden");

        // A guest may do none of the owner's things.
        let forbidden = json!({"message": "This action is unauthorized."});
        for (method, path, body) in [
            ("PUT", site_path.clone(), Some(json!({"name": "Mine"}))),
            ("DELETE", site_path.clone(), None),
            (
                "POST",
                format!("{site_path}/teams/invite"),
                Some(json!({"email": "x@example.com"})),
            ),
            (
                "PUT",
                format!("{team_path}/assets"),
                Some(json!({"can_access_all_assets": true})),
            ),
            ("POST", format!("{team_path}/sensitive-data-access"), None),
            ("DELETE", format!("{team_path}/sensitive-data-access"), None),
            ("POST", format!("{team_path}/transfer-ownership"), None),
            ("DELETE", team_path.clone(), None),
        ] {
            let answer = guest.send(method, &path, body.as_ref()).await;
            assert_eq!(
                (answer.status, &answer.json),
                (403, &forbidden),
                "{method} {path}"
            );
        }

        // The owner sees every team; the guest the owner and itself.
        let teams = owner.get_ok(&format!("{site_path}/teams")).await["data"].clone();
        teams
            .as_array()
            .unwrap()
            .iter()
            .for_each(assert_access_shape);
        let roles: Vec<&Value> = teams
            .as_array()
            .unwrap()
            .iter()
            .map(|t| &t["role"])
            .collect();
        assert_eq!(roles, [&json!("owner"), &json!("guest")]);
        assert_eq!(teams[0]["can_access_all_assets"], true);
        let owner_team = teams[0]["uuid"].as_str().unwrap().to_string();
        assert_eq!(
            guest.get_ok(&format!("{site_path}/teams")).await["data"],
            teams
        );
        let shown = owner.get_ok(&team_path).await["data"].clone();
        assert_eq!(shown, teams[1]);

        let all = json!({"can_access_all_assets": true});
        let access = owner
            .expect(200, "PUT", &format!("{team_path}/assets"), Some(&all))
            .await;
        assert_eq!(access["data"]["accessible_assets"], json!([]));
        assert!(guest.charger(&unlisted).await.is_some(), "every asset now");
        assert_eq!(guest.get_ok(&site_path).await["data"]["chargers_count"], 2);

        let sensitive = format!("{team_path}/sensitive-data-access");
        let access = owner.expect(200, "DELETE", &sensitive, None).await["data"].clone();
        assert_eq!(access["sensitive_data"], false);
        assert_eq!(
            site_permissions(&guest, &site).await,
            permissions(true, false, false)
        );
        let charger = guest.charger(&listed).await.expect("still visible");
        assert_eq!(
            charger["permissions"],
            permissions(true, false, false).unwrap()
        );

        let asked = guest
            .expect(200, "POST", &format!("{sensitive}/request"), None)
            .await["data"]
            .clone();
        assert_record_time(&asked["sensitive_data_requested_at"], "requested_at");
        assert_eq!(asked["sensitive_data"], false);
        let until = date_in_days(30);
        let granted = owner
            .expect(200, "POST", &sensitive, Some(&json!({"expires_at": until})))
            .await["data"]
            .clone();
        assert_eq!(granted["sensitive_data"], true);
        assert_eq!(
            granted["sensitive_data_expires_at"],
            format!("{until}T00:00:00.000000Z")
        );
        assert_eq!(
            granted["sensitive_data_requested_at"],
            Value::Null,
            "answered"
        );
        assert_eq!(
            site_permissions(&guest, &site).await,
            permissions(true, true, false)
        );

        let kept = owner
            .expect_invalid("DELETE", &format!("{site_path}/teams/{owner_team}"), None)
            .await;
        assert!(kept.get("team_uuid").is_some(), "{kept}");
        assert_eq!(
            owner.expect(200, "DELETE", &team_path, None).await,
            json!({})
        );
        assert_eq!(guest.get(&site_path).await.status, 404, "removed");
        assert_eq!(guest.charger(&listed).await, None);
        assert_eq!(owner.get(&team_path).await.status, 404);
    }
);

on_both_stores!(ownership_moves_to_a_guest_team_and_back_by_invite, |cms| {
    let owner = Api::new(&cms, &cms.create_token(OWNER, None).await);
    let guest = Api::new(&cms, &cms.guest_token(GUEST).await);
    let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
    let site = uuid_of(&create_site(&owner, "Depot").await);
    let site_path = format!("/api/v3/sites/{site}");
    let token = invite(&owner, &site, GUEST, json!({"data_access": false})).await;

    // Only the invited address may accept, and not for the owner team.
    let accept_path = format!("{site_path}/teams/invite/accept");
    let answer = stranger.post(&accept_path, &json!({"token": token})).await;
    assert_eq!(answer.status, 403, "another address: {}", answer.body);
    let access = accept_invite(&guest, &site, &token).await;
    assert_eq!(access["sensitive_data"], false);
    assert_eq!(
        site_permissions(&guest, &site).await,
        permissions(true, false, false)
    );

    let guest_team = access["uuid"].as_str().unwrap().to_string();
    let transfer = format!("{site_path}/teams/{guest_team}/transfer-ownership");
    let moved = owner.expect(200, "POST", &transfer, None).await["data"].clone();
    assert_eq!(moved["role"], "owner");
    assert_eq!(
        site_permissions(&guest, &site).await,
        permissions(true, true, true)
    );
    assert_eq!(
        site_permissions(&owner, &site).await,
        permissions(true, true, false)
    );
    let renamed = json!({"name": "Guest's depot"});
    assert_eq!(owner.put(&site_path, &renamed).await.status, 403);
    assert_eq!(guest.put(&site_path, &renamed).await.status, 200);
    let again = guest.expect_invalid("POST", &transfer, None).await;
    assert!(
        again.get("team_uuid").is_some(),
        "already the owner: {again}"
    );

    let teams = guest.get_ok(&format!("{site_path}/teams")).await["data"].clone();
    let old_owner = teams[1].clone();
    assert_eq!(
        (&old_owner["role"], &old_owner["sensitive_data"]),
        (&json!("guest"), &json!(true)),
        "the old owner stays with sensitive data: {teams}"
    );

    // An ownership invite, accepted by the old owner's team, hands the site back.
    let token = invite(&guest, &site, OWNER, json!({"transfer_ownership": true})).await;
    let body = json!({"token": token, "team_uuid": old_owner["uuid"]});
    let back = owner.expect(200, "POST", &accept_path, Some(&body)).await;
    assert_eq!(back["data"]["role"], "owner");
    assert_eq!(
        site_permissions(&owner, &site).await,
        permissions(true, true, true)
    );
    assert_eq!(
        site_permissions(&guest, &site).await,
        permissions(true, true, false)
    );

    // The owner team cannot accept an invite to its own site.
    let token = invite(&owner, &site, OWNER, json!({})).await;
    let errors = owner
        .expect_invalid("POST", &accept_path, Some(&json!({"token": token})))
        .await;
    assert!(errors.get("team_uuid").is_some(), "{errors}");
});

on_both_stores!(
    invites_and_access_changes_are_validated_one_rule_at_a_time,
    |cms| {
        let owner = Api::new(&cms, &cms.create_token(OWNER, None).await);
        let guest = Api::new(&cms, &cms.guest_token(GUEST).await);
        let site = uuid_of(&create_site(&owner, "Depot").await);
        let site_path = format!("/api/v3/sites/{site}");
        let invite_path = format!("{site_path}/teams/invite");
        let today = date_in_days(0);
        let cases = [
            ("email", json!({})),
            ("email", json!({"email": "not-an-address"})),
            (
                "email",
                json!({"email": format!("{}@example.com", "x".repeat(244))}),
            ),
            ("email", json!({"email": 42})),
            (
                "transfer_ownership",
                json!({"email": GUEST, "transfer_ownership": "maybe"}),
            ),
            ("data_access", json!({"email": GUEST, "data_access": "yes"})),
            (
                "data_access_expires_at",
                json!({"email": GUEST, "data_access_expires_at": today}),
            ),
            (
                "data_access_expires_at",
                json!({"email": GUEST, "data_access_expires_at": "2001-01-01"}),
            ),
            (
                "data_access_expires_at",
                json!({"email": GUEST, "data_access_expires_at": "soon"}),
            ),
            (
                "can_access_all_assets",
                json!({"email": GUEST, "can_access_all_assets": "some"}),
            ),
            (
                "accessible_assets",
                json!({"email": GUEST, "can_access_all_assets": false}),
            ),
            (
                "accessible_assets",
                json!({"email": GUEST, "can_access_all_assets": false, "accessible_assets": []}),
            ),
            (
                "accessible_assets",
                json!({"email": GUEST, "accessible_assets": "all"}),
            ),
            (
                "accessible_assets.0.uuid",
                json!({"email": GUEST, "can_access_all_assets": false,
                   "accessible_assets": [{"type": "charger", "uuid": "00000000-0000-0000-0000-000000000000"}]}),
            ),
        ];
        for (field, body) in &cases {
            let errors = owner.expect_invalid("POST", &invite_path, Some(body)).await;
            assert_eq!(
                errors.as_object().unwrap().keys().collect::<Vec<_>>(),
                [field],
                "{body}: {errors}"
            );
        }
        let errors = owner
            .expect_invalid("POST", &invite_path, Some(&cases[6].1))
            .await;
        assert_eq!(
            errors["data_access_expires_at"],
            json!(["The data access expires at field must be a date after today."])
        );
        let errors = owner
            .expect_invalid("POST", &invite_path, Some(&cases[10].1))
            .await;
        assert_eq!(
            errors["accessible_assets"],
            json!(["The accessible assets field is required when can access all assets is false."])
        );
        let errors = owner
            .expect_invalid("POST", &invite_path, Some(&cases[1].1))
            .await;
        assert_eq!(
            errors["email"],
            json!(["The email field must be a valid email address."])
        );
        let full = json!({"email": GUEST, "transfer_ownership": null, "data_access": null,
        "data_access_expires_at": date_in_days(1), "can_access_all_assets": null,
        "accessible_assets": null});
        let token = invite(&owner, &site, GUEST, full).await;

        // Accepting: a token and, if named, a team of the caller's.
        let accept_path = format!("{site_path}/teams/invite/accept");
        for (field, body) in [
            ("token", json!({})),
            ("token", json!({"token": "not-the-token"})),
            (
                "team_uuid",
                json!({"token": token, "team_uuid": "00000000-0000-0000-0000-000000000000"}),
            ),
        ] {
            let errors = guest
                .expect_invalid("POST", &accept_path, Some(&body))
                .await;
            assert_eq!(
                errors.as_object().unwrap().keys().collect::<Vec<_>>(),
                [field],
                "{body}: {errors}"
            );
        }
        let sites_only = Api::new(
            &cms,
            &cms.create_token(GUEST, Some("sites:read,sites:write"))
                .await,
        );
        let answer = sites_only
            .post(&accept_path, &json!({"token": token}))
            .await;
        assert_eq!(
            answer.status, 403,
            "accepting needs teams:write: {}",
            answer.body
        );
        let guest_team = accept_invite(&guest, &site, &token).await["uuid"]
            .as_str()
            .unwrap()
            .to_string();

        // Changing a guest's access.
        let team_path = format!("{site_path}/teams/{guest_team}");
        let sensitive = format!("{team_path}/sensitive-data-access");
        for expires_at in [
            json!(today),
            json!("2001-01-01"),
            json!("tomorrow"),
            json!(5),
        ] {
            let body = json!({"expires_at": expires_at});
            let errors = owner.expect_invalid("POST", &sensitive, Some(&body)).await;
            assert!(errors.get("expires_at").is_some(), "{body}: {errors}");
        }
        let forever = owner
            .expect(200, "POST", &sensitive, Some(&json!({"expires_at": null})))
            .await;
        assert_eq!(forever["data"]["sensitive_data_expires_at"], Value::Null);
        let assets = format!("{team_path}/assets");
        let charger = cms.add_charger_with("CP-ASSET-1", &["--site", &site]).await;
        for (field, body) in [
            ("can_access_all_assets", json!({})),
            (
                "can_access_all_assets",
                json!({"can_access_all_assets": "no"}),
            ),
            ("accessible_assets", json!({"can_access_all_assets": false})),
            (
                "accessible_assets",
                json!({"can_access_all_assets": false, "accessible_assets": [null]}),
            ),
            (
                "accessible_assets.0",
                json!({"can_access_all_assets": false, "accessible_assets": ["x"]}),
            ),
            (
                "accessible_assets.0.type",
                json!({"can_access_all_assets": false, "accessible_assets": [{"type": "meter", "uuid": charger}]}),
            ),
            (
                "accessible_assets.1.uuid",
                json!({"can_access_all_assets": false, "accessible_assets": [{"type": "charger", "uuid": charger}, {"type": "charger", "uuid": "nope"}]}),
            ),
        ] {
            let errors = owner.expect_invalid("PUT", &assets, Some(&body)).await;
            assert_eq!(
                errors.as_object().unwrap().keys().collect::<Vec<_>>(),
                [field],
                "{body}: {errors}"
            );
        }
        let one = json!({"can_access_all_assets": false, "accessible_assets": [{"type": "charger", "uuid": charger}]});
        let limited = owner.expect(200, "PUT", &assets, Some(&one)).await;
        assert_eq!(limited["data"]["accessible_assets"][0]["uuid"], charger);

        // Unknown sites and teams are 404s; other customers' sites too.
        let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
        let unknown_team = format!("{site_path}/teams/00000000-0000-0000-0000-000000000000");
        assert_eq!(owner.get(&unknown_team).await.status, 404);
        assert_eq!(
            owner
                .post(&format!("{unknown_team}/transfer-ownership"), &json!({}))
                .await
                .status,
            404
        );
        for (method, path) in [
            ("GET", format!("{site_path}/teams")),
            ("GET", team_path.clone()),
            ("POST", invite_path.clone()),
            ("POST", format!("{sensitive}/request")),
        ] {
            let answer = stranger
                .send(method, &path, Some(&json!({"email": GUEST})))
                .await;
            assert_eq!(answer.status, 404, "{method} {path}: {}", answer.body);
        }
        let answer = owner
            .send_authorized("GET", &format!("{site_path}/teams"), None, None)
            .await;
        assert_eq!(answer.status, 401);
        let read_only = Api::new(&cms, &cms.create_token(OWNER, Some("sites:read")).await);
        assert_eq!(
            read_only.get(&format!("{site_path}/teams")).await.status,
            200
        );
        let answer = read_only.post(&invite_path, &json!({"email": GUEST})).await;
        assert_eq!(answer.status, 403, "inviting needs sites:write");
    }
);
