//! Team isolation: nobody sees another team's data. A resource of a team the caller does not
//! reach answers 404 exactly as one that does not exist (never 403, never 200), lists leave it
//! out, and nothing the stranger sends changes it. A shared site is seen with the access its
//! invite gave and no more: a visible thing the caller may not change, or whose sensitive data
//! they may not read, is a 403. So is a token without the endpoint's scope.
//!
//! Team A is the operator (the Operators team, owner of the default site, and their personal
//! team); team B is a guest (`--guest`: another customer), whose token has every scope.

use crate::support::rest::{create_site, invite_guest, team_of_type, uuid_of};
use crate::support::{Api, Charger, Cms, eventually, on_both_stores};
use serde_json::{Value, json};

const UNAUTHORIZED: &str = "This action is unauthorized.";

/// `data` of a 201 answer.
async fn created(api: &Api, path: &str, body: Value) -> Value {
    api.expect(201, "POST", path, Some(&body)).await["data"].clone()
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"))
        .to_string()
}

/// The uuids of a list answer, in order.
fn uuids(list: &Value) -> Vec<String> {
    let data = list["data"]
        .as_array()
        .unwrap_or_else(|| panic!("no data array: {list}"));
    data.iter().map(|item| text(&item["uuid"])).collect()
}

/// Boots `identity` (already registered), reports connector 1, and charges once with a meter
/// reading in between; returns the connected charger once `owner` sees the stopped
/// transaction and the reading. The connection stays open while the charger is kept.
async fn charge_once(cms: &Cms, owner: &Api, identity: &str, uuid: &str) -> Charger {
    let mut charger = Charger::connect_and_boot(cms, identity, "1.0.0").await;
    let status = json!({"connectorId": 1, "errorCode": "NoError", "status": "Available"});
    charger.call_result("StatusNotification", status).await;
    let start = json!({"connectorId": 1, "idTag": "TAG-ISO", "meterStart": 1000,
                       "timestamp": "2026-02-10T09:00:00Z"});
    let started = charger.call_result("StartTransaction", start).await;
    let id = started["transactionId"].as_i64().expect("a transactionId");
    let sample = json!({"value": "16.1", "measurand": "Current.Import", "phase": "L1",
                        "location": "Inlet", "unit": "A"});
    let reading = json!({"connectorId": 1, "transactionId": id, "meterValue": [
        {"timestamp": "2026-02-10T09:10:00Z", "sampledValue": [sample]}]});
    charger.call_result("MeterValues", reading).await;
    let stop = json!({"transactionId": id, "meterStop": 2500, "timestamp": "2026-02-10T09:30:00Z"});
    charger.call_result("StopTransaction", stop).await;
    let transactions = format!("/api/v3/chargers/{uuid}/transactions");
    eventually("the owner to see the stopped transaction", async || {
        let list = owner.get_ok(&transactions).await;
        match list["data"][0]["stopped_at"].is_string() {
            true => Ok(()),
            false => Err(list.to_string()),
        }
    })
    .await;
    eventually("the owner to see the meter reading", async || {
        let answer = owner.latest_meter_value(uuid, 1).await;
        match answer.json["meterValue"].as_array() {
            Some(values) if !values.is_empty() => Ok(()),
            _ => Err(format!("{} {}", answer.status, answer.body)),
        }
    })
    .await;
    charger
}

/// A request a stranger makes about another team's things. `<name>` placeholders in the path
/// and body stand for them; filled with things that do not exist, the same request must get the
/// very same answer, so that it tells the stranger nothing.
struct Probe {
    method: &'static str,
    path: String,
    body: Option<&'static str>,
    /// 404 for everything named in the path; the meter creation names a charger in its body,
    /// which is a field to validate (422) whether it exists or is merely not the team's.
    status: u16,
}

fn probe(method: &'static str, path: impl Into<String>, body: Option<&'static str>) -> Probe {
    Probe {
        method,
        path: path.into(),
        body,
        status: 404,
    }
}

fn fill(template: &str, names: &[(&str, String)]) -> String {
    names
        .iter()
        .fold(template.to_string(), |text, (name, value)| {
            text.replace(&format!("<{name}>"), value)
        })
}

/// Sends every probe with `theirs` and with `missing`; returns a line per answer that is not
/// the expected status with a `message`, or differs from the answer about a missing thing.
async fn leaks(
    api: &Api,
    probes: &[Probe],
    theirs: &[(&str, String)],
    missing: &[(&str, String)],
) -> Vec<String> {
    let mut leaks = Vec::new();
    for p in probes {
        let (path, status, body, json) = send(api, p, theirs).await;
        let (_, nothing_status, nothing_body, _) = send(api, p, missing).await;
        if status != p.status || !json["message"].is_string() {
            leaks.push(format!("{} {path} answered {status}: {body}", p.method));
        } else if (status, &body) != (nothing_status, &nothing_body) {
            leaks.push(format!(
                "{} {path} answered {status} {body} but {nothing_status} {nothing_body} for a \
                 missing one",
                p.method
            ));
        }
    }
    leaks
}

/// Sends a probe with its placeholders filled from `names`: the path, status, body and JSON.
async fn send(api: &Api, p: &Probe, names: &[(&str, String)]) -> (String, u16, String, Value) {
    let path = fill(&p.path, names);
    let body = p
        .body
        .map(|b| serde_json::from_str::<Value>(&fill(b, names)).expect("a JSON body template"));
    let answer = api.send(p.method, &path, body.as_ref()).await;
    (path, answer.status, answer.body, answer.json)
}

/// A's things as A sees them, to compare before and after the stranger's requests.
async fn snapshot(a: &Api, paths: &[String]) -> Vec<(String, u16, String)> {
    let mut seen = Vec::new();
    for path in paths {
        let answer = a.get(path).await;
        seen.push((path.clone(), answer.status, answer.body));
    }
    seen
}

on_both_stores!(
    another_teams_things_are_not_found_and_stay_unchanged,
    |cms| {
        // Team A: the operator, with a charger that has charged, a site of their own, a team with
        // a domain, a meter, proxy servers, connector settings and a pending invite.
        let a = Api::new(&cms, &cms.operator_token().await);
        let charger_uuid = cms.add_charger("CP-ISO-1").await;
        cms.license("CP-ISO-1", false, true).await;
        let _charger = charge_once(&cms, &a, "CP-ISO-1", &charger_uuid).await;
        let site = uuids(&a.get_ok("/api/v3/sites").await).remove(0);
        let site_id = a.get_ok(&format!("/api/v3/sites/{site}")).await["data"]["id"].clone();
        let own_site = create_site(&a, "A's depot").await;
        let team = created(
            &a,
            "/api/v2/teams",
            json!({"name": "A Fleet", "email": "fleet@a.example", "type": "business"}),
        )
        .await;
        let team_uuid = text(&team["uuid"]);
        let domain = created(
            &a,
            &format!("/api/v3/teams/{team_uuid}/domains"),
            json!({"domain": "a-fleet.example"}),
        )
        .await;
        let operators = team_of_type(&a, "operators").await;
        let personal = team_of_type(&a, "personal").await;
        let charger_id =
            a.get_ok(&format!("/api/v3/chargers/{charger_uuid}")).await["data"]["id"].clone();
        created(
            &a,
            &format!("/api/v2/teams/{}/meters", operators["id"]),
            json!({"type": "ct_meter", "charger_id": charger_id}),
        )
        .await;
        let server = json!({"websocket_url": "wss://proxy.a.example/ocpp", "role": "leader"});
        let proxy = json!({"vendor_role": "ROLE_LEADER", "servers": [server]});
        a.expect(
            200,
            "PUT",
            &format!("/api/v3/chargers/{charger_uuid}/proxy"),
            Some(&proxy),
        )
        .await;
        let settings = json!({"phase_rotation": "RST", "max_amperage": 16});
        a.expect(
            200,
            "PUT",
            &format!("/api/v3/chargers/{charger_uuid}/connectors/1"),
            Some(&settings),
        )
        .await;
        a.expect(
            201,
            "POST",
            &format!("/api/v3/sites/{site}/teams/invite"),
            Some(&json!({"email": "someone@a.example"})),
        )
        .await;

        // Roaming: A's personal team as a CPO, a provider with a pending OCPI connection, and
        // A's own site published to it.
        let personal_uuid = text(&personal["uuid"]);
        a.expect(
            200,
            "PUT",
            &format!("/api/v3/teams/{personal_uuid}/ocpi"),
            Some(&json!({"country_code": "NL", "party_id": "AAA", "name": "A roams"})),
        )
        .await;
        let provider = created(
            &a,
            &format!("/api/v3/teams/{personal_uuid}/providers"),
            json!({"name": "A's eMSP", "country_code": "NL", "party_id": "EMA"}),
        )
        .await;
        let provider_uuid = text(&provider["uuid"]);
        let provider_path = format!("/api/v3/teams/{personal_uuid}/providers/{provider_uuid}");
        a.expect(201, "POST", &format!("{provider_path}/ocpi/token"), None)
            .await;
        let roaming = json!({"latitude": "52.37890", "longitude": "4.90040",
                             "provider_uuids": [provider_uuid]});
        a.expect(
            200,
            "PUT",
            &format!("/api/v3/sites/{}/roaming", text(&own_site["uuid"])),
            Some(&roaming),
        )
        .await;

        // Team B: another customer with a site and a charger of their own.
        let b = Api::new(&cms, &cms.guest_token("b@example.org").await);
        let b_team = team_of_type(&b, "personal").await;
        let (b_team_uuid, b_team_id) = (text(&b_team["uuid"]), b_team["id"].clone());
        let b_site = create_site(&b, "B's yard").await;
        let b_site_uuid = text(&b_site["uuid"]);
        let b_charger = created(
            &b,
            &format!("/api/v3/sites/{b_site_uuid}/chargers"),
            json!({"identity": "CP-ISO-B"}),
        )
        .await;
        let b_charger_uuid = text(&b_charger["uuid"]);
        // The same endpoints serve B's own things: the 404s below are about whose things they are.
        b.get_ok(&format!("/api/v3/chargers/{b_charger_uuid}"))
            .await;
        b.get_ok(&format!(
            "/api/v2/teams/{b_team_id}/sites/{}/connectors",
            b_site["id"]
        ))
        .await;
        b.get_ok(&format!("/api/v3/teams/{b_team_uuid}/domains"))
            .await;

        let theirs = [
            ("charger", charger_uuid.clone()),
            ("charger_id", charger_id.to_string()),
            ("site", site.clone()),
            ("site_id", site_id.to_string()),
            ("own_site", text(&own_site["uuid"])),
            ("own_site_id", own_site["id"].to_string()),
            ("team", team_uuid.clone()),
            ("team_id", team["id"].to_string()),
            ("operators", text(&operators["uuid"])),
            ("operators_id", operators["id"].to_string()),
            ("personal", text(&personal["uuid"])),
            ("domain_id", domain["id"].to_string()),
            ("provider", provider_uuid.clone()),
        ];
        let missing: Vec<(&str, String)> = theirs
            .iter()
            .enumerate()
            .map(|(n, (name, _))| match name.ends_with("_id") {
                true => (*name, format!("{}", 900_000_000 + n)),
                false => (*name, format!("5a1d0c2e-7b3f-4c8a-9e61-{:012}", n)),
            })
            .collect();

        let charger = "/api/v3/chargers/<charger>";
        let mut probes = vec![
            probe("GET", charger, None),
            probe("GET", format!("{charger}/connectors"), None),
            probe(
                "PUT",
                format!("{charger}/connectors/1"),
                Some(r#"{"phase_rotation":"TSR","max_amperage":32}"#),
            ),
            probe(
                "GET",
                format!("{charger}/connectors/1/latest-metervalue"),
                None,
            ),
            probe("GET", format!("{charger}/transactions"), None),
            probe("GET", format!("{charger}/proxy"), None),
            probe(
                "PUT",
                format!("{charger}/proxy"),
                Some(r#"{"vendor_role":"ROLE_FOLLOWER","servers":null}"#),
            ),
            probe("GET", "/api/v3/meters/chargee/<charger>", None),
            probe(
                "GET",
                "/api/v2/teams/<operators_id>/sites/<site_id>/connectors",
                None,
            ),
            probe(
                "GET",
                format!("/api/v2/teams/{b_team_id}/sites/<site_id>/connectors"),
                None,
            ),
            probe(
                "GET",
                format!("/api/v2/teams/{b_team_id}/sites/<own_site_id>/connectors"),
                None,
            ),
            probe(
                "POST",
                "/api/v2/teams/<operators_id>/meters",
                Some(r#"{"type":"ct_meter","charger_id":<charger_id>}"#),
            ),
            probe(
                "POST",
                "/api/v2/teams/<team_id>/meters",
                Some(r#"{"type":"ct_meter","charger_id":<charger_id>}"#),
            ),
            Probe {
                status: 422,
                ..probe(
                    "POST",
                    format!("/api/v2/teams/{b_team_id}/meters"),
                    Some(r#"{"type":"ct_meter","charger_id":<charger_id>}"#),
                )
            },
            probe(
                "DELETE",
                format!("/api/v3/teams/{b_team_uuid}/domains/<domain_id>"),
                None,
            ),
        ];
        let ocpi = "/api/v3/teams/<personal>/ocpi";
        let connection = "/api/v3/teams/<personal>/providers/<provider>/ocpi";
        probes.extend([
            probe("GET", ocpi, None),
            probe(
                "PUT",
                ocpi,
                Some(r#"{"country_code":"DE","party_id":"BBB","name":"B took it"}"#),
            ),
            probe("GET", connection, None),
            probe("DELETE", connection, None),
            probe("POST", format!("{connection}/token"), None),
            probe(
                "POST",
                format!("{connection}/register"),
                Some(r#"{"versions_url":"https://b.example/ocpi/versions","token":"b"}"#),
            ),
            probe("GET", format!("{connection}/pushes"), None),
            probe("GET", "/api/v3/sites/<own_site>/roaming", None),
            probe(
                "PUT",
                "/api/v3/sites/<own_site>/roaming",
                Some(r#"{"latitude":"1.00000","longitude":"1.00000","provider_uuids":[]}"#),
            ),
        ]);
        for team in ["team", "operators", "personal"] {
            let domains = format!("/api/v3/teams/<{team}>/domains");
            probes.push(probe("GET", domains.clone(), None));
            probes.push(probe(
                "POST",
                domains.clone(),
                Some(r#"{"domain":"b-was-here.example"}"#),
            ));
            probes.push(probe("DELETE", format!("{domains}/<domain_id>"), None));
        }
        for (site, owner) in [("<site>", "<operators>"), ("<own_site>", "<personal>")] {
            let site = format!("/api/v3/sites/{site}");
            probes.push(probe("GET", site.clone(), None));
            probes.push(probe("PUT", site.clone(), Some(r#"{"name":"Taken over"}"#)));
            probes.push(probe("DELETE", site.clone(), None));
            probes.push(probe("GET", format!("{site}/chargers"), None));
            probes.push(probe(
                "POST",
                format!("{site}/chargers"),
                Some(r#"{"identity":"CP-ISO-INTRUDER"}"#),
            ));
            probes.push(probe("GET", format!("{site}/teams"), None));
            probes.push(probe(
                "POST",
                format!("{site}/teams/invite"),
                Some(r#"{"email":"b@example.org","data_access":true}"#),
            ));
            for team in [owner, b_team_uuid.as_str()] {
                let access = format!("{site}/teams/{team}");
                probes.push(probe("GET", access.clone(), None));
                probes.push(probe("DELETE", access.clone(), None));
                probes.push(probe(
                    "POST",
                    format!("{access}/sensitive-data-access"),
                    Some("{}"),
                ));
                probes.push(probe(
                    "DELETE",
                    format!("{access}/sensitive-data-access"),
                    None,
                ));
                probes.push(probe(
                    "POST",
                    format!("{access}/sensitive-data-access/request"),
                    None,
                ));
                probes.push(probe(
                    "PUT",
                    format!("{access}/assets"),
                    Some(r#"{"can_access_all_assets":true}"#),
                ));
                probes.push(probe("POST", format!("{access}/transfer-ownership"), None));
            }
        }

        let a_views: Vec<String> = [
            charger.to_string(),
            format!("{charger}/connectors"),
            format!("{charger}/connectors/1/latest-metervalue"),
            format!("{charger}/transactions"),
            format!("{charger}/proxy"),
            "/api/v3/meters/chargee/<charger>".into(),
            "/api/v3/chargers".into(),
            "/api/v3/sites".into(),
            "/api/v2/teams".into(),
            "/api/v3/sites/<site>".into(),
            "/api/v3/sites/<site>/chargers".into(),
            "/api/v3/sites/<site>/teams".into(),
            "/api/v3/sites/<own_site>".into(),
            "/api/v3/sites/<own_site>/teams".into(),
            "/api/v2/teams/<operators_id>/sites/<site_id>/connectors".into(),
            "/api/v3/teams/<team>/domains".into(),
            "/api/v3/teams/<personal>/ocpi".into(),
            "/api/v3/teams/<personal>/providers/<provider>/ocpi".into(),
            "/api/v3/sites/<own_site>/roaming".into(),
        ]
        .iter()
        .map(|path| fill(path, &theirs))
        .collect();
        let before = snapshot(&a, &a_views).await;
        assert!(
            before.iter().all(|(_, status, _)| *status == 200),
            "A sees all of their things: {before:?}"
        );

        let found = leaks(&b, &probes, &theirs, &missing).await;
        assert!(
            found.is_empty(),
            "B learnt of or touched A's things:\n{}",
            found.join("\n")
        );
        assert_eq!(snapshot(&a, &a_views).await, before, "A's things changed");

        // Lists: each team's own things only.
        assert_eq!(
            uuids(&b.get_ok("/api/v3/chargers").await),
            [b_charger_uuid.as_str()]
        );
        assert_eq!(
            uuids(&b.get_ok("/api/v3/sites").await),
            [b_site_uuid.as_str()]
        );
        assert_eq!(
            uuids(&b.get_ok("/api/v2/teams").await),
            [b_team_uuid.as_str()]
        );
        assert_eq!(uuids(&a.get_ok("/api/v3/chargers").await), [charger_uuid]);
        let mut a_sites = uuids(&a.get_ok("/api/v3/sites").await);
        a_sites.sort();
        let mut expected = vec![site, text(&own_site["uuid"])];
        expected.sort();
        assert_eq!(a_sites, expected);
        let a_teams = uuids(&a.get_ok("/api/v2/teams").await);
        assert!(
            !a_teams.contains(&b_team_uuid),
            "A lists B's team: {a_teams:?}"
        );
        assert_eq!(
            a_teams.len(),
            3,
            "personal, Operators and A Fleet: {a_teams:?}"
        );
    }
);

/// A request and the refusal it must get: 403 with the forbidden body, or 404 with a message.
type Refusal = (u16, &'static str, String, Option<Value>);

/// Sends each request; returns a line per answer that is not the refusal due.
async fn wrong_answers(api: &Api, refusals: Vec<Refusal>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (status, method, path, body) in refusals {
        let answer = api.send(method, &path, body.as_ref()).await;
        let right = match status {
            403 => answer.status == 403 && answer.json == json!({"message": UNAUTHORIZED}),
            _ => answer.status == status && answer.json["message"].is_string(),
        };
        if !right {
            wrong.push(format!(
                "{method} {path}: {status} due, answered {} {}",
                answer.status, answer.body
            ));
        }
    }
    wrong
}

on_both_stores!(
    a_shared_site_is_seen_with_the_access_granted_and_no_more,
    |cms| {
        let a = Api::new(&cms, &cms.operator_token().await);
        let charger_uuid = cms.add_charger("CP-ISO-2").await;
        let _charger = charge_once(&cms, &a, "CP-ISO-2", &charger_uuid).await;
        let site = uuids(&a.get_ok("/api/v3/sites").await).remove(0);
        let other_site = uuid_of(&create_site(&a, "A's depot").await);
        let hidden_charger = cms
            .add_charger_with("CP-ISO-3", &["--site", &other_site])
            .await;

        // A invites B to the default site with basic access; B accepts for their personal team.
        let basic_access = json!({"data_access": false});
        let b = invite_guest(&cms, &a, &site, "b@example.org", basic_access).await;
        let b_team = team_of_type(&b, "personal").await;

        // B sees the site and its charger, with basic permissions.
        let basic = json!({"basic": true, "sensitive": false, "full": false});
        let shown = b.get_ok(&format!("/api/v3/sites/{site}")).await;
        assert_eq!(shown["data"]["permissions"], basic, "{shown}");
        let charger = format!("/api/v3/chargers/{charger_uuid}");
        assert_eq!(b.get_ok(&charger).await["data"]["permissions"], basic);
        assert_eq!(uuids(&b.get_ok("/api/v3/sites").await), [site.as_str()]);
        assert_eq!(
            uuids(&b.get_ok("/api/v3/chargers").await),
            [charger_uuid.as_str()]
        );
        assert_eq!(
            uuids(&b.get_ok(&format!("/api/v3/sites/{site}/chargers")).await),
            [charger_uuid.as_str()]
        );
        b.get_ok(&format!("{charger}/connectors")).await;
        let site_id = shown["data"]["id"].clone();
        let connectors = b
            .get_ok(&format!(
                "/api/v2/teams/{}/sites/{site_id}/connectors",
                b_team["id"]
            ))
            .await;
        assert_eq!(connectors["data"][0]["connector_id"], 1, "{connectors}");
        let teams = uuids(&b.get_ok(&format!("/api/v3/sites/{site}/teams")).await);
        let owner = text(&team_of_type(&a, "operators").await["uuid"]);
        assert_eq!(
            teams,
            [owner, text(&b_team["uuid"])],
            "the owner, then B's own access"
        );

        // Its sensitive data and every change are refused (B knows the charger is there), while
        // A's other site and its charger stay out of sight.
        let settings = json!({"phase_rotation": "RST", "max_amperage": 16});
        let renamed = json!({"name": "Ours now"});
        let other = format!("/api/v3/sites/{other_site}");
        let refusals: Vec<Refusal> = vec![
            (
                403,
                "GET",
                format!("{charger}/connectors/1/latest-metervalue"),
                None,
            ),
            (403, "GET", format!("{charger}/transactions"), None),
            // The actions' log: requests and answers carry drivers' id tags (a remote start's,
            // a local list's).
            (403, "GET", format!("{charger}/actions"), None),
            (
                403,
                "GET",
                format!("{charger}/actions/00000000-0000-4000-8000-000000000001"),
                None,
            ),
            (
                403,
                "GET",
                format!("/api/v3/meters/chargee/{charger_uuid}"),
                None,
            ),
            (
                403,
                "PUT",
                format!("{charger}/connectors/1"),
                Some(settings.clone()),
            ),
            (
                403,
                "PUT",
                format!("{charger}/proxy"),
                Some(json!({"vendor_role": "ROLE_LEADER"})),
            ),
            (
                403,
                "PUT",
                format!("/api/v3/sites/{site}"),
                Some(renamed.clone()),
            ),
            (403, "DELETE", format!("/api/v3/sites/{site}"), None),
            (
                403,
                "POST",
                format!("/api/v3/sites/{site}/chargers"),
                Some(json!({"identity": "CP-ISO-B"})),
            ),
            (
                403,
                "POST",
                format!("/api/v3/sites/{site}/teams/invite"),
                Some(json!({"email": "c@example.org"})),
            ),
            (404, "GET", other.clone(), None),
            (404, "PUT", other.clone(), Some(renamed.clone())),
            (404, "GET", format!("{other}/chargers"), None),
            (
                404,
                "GET",
                format!("/api/v3/chargers/{hidden_charger}"),
                None,
            ),
            (
                404,
                "GET",
                format!("/api/v3/chargers/{hidden_charger}/connectors"),
                None,
            ),
        ];
        let mut wrong = wrong_answers(&b, refusals).await;
        let a_sees = a.get_ok(&format!("/api/v3/sites/{site}")).await;
        assert_eq!(
            a_sees["data"]["name"], shown["data"]["name"],
            "B renamed the site"
        );
        assert_eq!(
            connectors["data"][0]["max_amperage"],
            a.get_ok(&format!(
                "/api/v2/teams/{}/sites/{site_id}/connectors",
                team_of_type(&a, "operators").await["id"]
            ))
            .await["data"][0]["max_amperage"],
            "B changed the connector"
        );

        // A's own token without the scope an endpoint needs is refused on A's own things.
        let read_only = cms
            .create_token("operator@example.com", Some("chargers:read"))
            .await;
        let read_only = Api::new(&cms, &read_only);
        let full = read_only.get_ok(&charger).await["data"]["permissions"]["full"].clone();
        assert_eq!(full, true, "the same user, with full access");
        let refusals = vec![
            (
                403,
                "PUT",
                format!("{charger}/connectors/1"),
                Some(settings),
            ),
            (403, "GET", format!("{charger}/transactions"), None),
            (
                403,
                "GET",
                format!("{charger}/connectors/1/latest-metervalue"),
                None,
            ),
            (403, "PUT", format!("/api/v3/sites/{site}"), Some(renamed)),
        ];
        wrong.extend(wrong_answers(&read_only, refusals).await);
        assert!(wrong.is_empty(), "wrong answers:\n{}", wrong.join("\n"));
    }
);
