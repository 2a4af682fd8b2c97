//! Teams (`/api/v2/teams`) and team domains (`/api/v3/teams/{team_uuid}/domains`) as a client
//! sees them: shapes, each validation rule, scopes, and other users' teams staying invisible.

use crate::support::fleet::is_uuid;
use crate::support::{Api, assert_record_time, on_both_stores};
use serde_json::{Value, json};

const TEAMS: &str = "/api/v2/teams";

fn team_body() -> Value {
    json!({"name": "Acme Charging", "email": "fleet@acme.example", "type": "business"})
}

/// Asserts the reference's team fields and their types.
fn assert_team_shape(team: &Value) {
    assert!(team["uuid"].as_str().is_some_and(is_uuid), "uuid: {team}");
    assert!(team["id"].is_i64(), "id: {team}");
    assert!(
        team["is_personal_team"].is_boolean(),
        "is_personal_team: {team}"
    );
    assert!(team["name"].is_string(), "name: {team}");
    assert!(team["type"].is_string(), "type: {team}");
    assert!(team["email"].is_string(), "email: {team}");
    assert_record_time(&team["created_at"], "team created_at");
    assert_record_time(&team["updated_at"], "team updated_at");
}

/// The caller's teams, as `GET /api/v2/teams` lists them.
async fn teams(api: &Api) -> Vec<Value> {
    let listed = api.get_ok(TEAMS).await;
    listed["data"]
        .as_array()
        .unwrap_or_else(|| panic!("teams list has a data array: {listed}"))
        .clone()
}

/// Creates a team; returns its uuid.
async fn create_team(api: &Api, name: &str) -> String {
    let body = json!({"name": name, "email": "team@example.com", "type": "installer"});
    let created = api.expect(201, "POST", TEAMS, Some(&body)).await;
    created["data"]["uuid"].as_str().expect("uuid").to_string()
}

fn domains_path(team_uuid: &str) -> String {
    format!("/api/v3/teams/{team_uuid}/domains")
}

/// The domain names of a team, in list order.
async fn domain_names(api: &Api, team_uuid: &str) -> Vec<String> {
    let listed = api.get_ok(&domains_path(team_uuid)).await;
    let data = listed["data"]
        .as_array()
        .unwrap_or_else(|| panic!("domains list has a data array: {listed}"));
    data.iter()
        .map(|d| d["domain"].as_str().expect("domain").to_string())
        .collect()
}

on_both_stores!(a_created_team_is_listed_for_its_creator_only, |cms| {
    let api = Api::new(&cms, &cms.guest_token("creator@example.com").await);
    let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);

    let created = api.expect(201, "POST", TEAMS, Some(&team_body())).await;
    let team = &created["data"];
    assert_team_shape(team);
    assert_eq!(team["name"], "Acme Charging");
    assert_eq!(team["email"], "fleet@acme.example");
    assert_eq!(team["type"], "business");
    assert_eq!(team["is_personal_team"], false);

    let listed = teams(&api).await;
    assert_eq!(
        listed.len(),
        2,
        "the personal team and the new one: {listed:?}"
    );
    listed.iter().for_each(assert_team_shape);
    let personal = &listed[0];
    assert_eq!(personal["is_personal_team"], true, "{personal}");
    assert_eq!(personal["type"], "personal", "{personal}");
    assert_eq!(personal["email"], "creator@example.com", "{personal}");
    assert_eq!(&listed[1], team, "listed as created, oldest first");

    let theirs = teams(&stranger).await;
    assert_eq!(
        theirs.len(),
        1,
        "a stranger sees only their own team: {theirs:?}"
    );
    assert_ne!(theirs[0]["uuid"], team["uuid"]);
});

on_both_stores!(an_operator_sees_the_operators_team, |cms| {
    let api = Api::new(&cms, &cms.operator_token().await);
    let listed = teams(&api).await;
    let types: Vec<&Value> = listed.iter().map(|t| &t["type"]).collect();
    assert_eq!(
        types,
        [&json!("personal"), &json!("operators")],
        "{listed:?}"
    );
    let operators = &listed[1];
    assert_eq!(operators["name"], "Operators");
    assert_eq!(operators["is_personal_team"], false);
    assert!(operators["email"].is_null(), "no e-mail: {operators}");
});

on_both_stores!(creating_a_team_checks_each_field, |cms| {
    let api = Api::new(&cms, &cms.guest_token("rules@example.com").await);
    let long_email = format!("{}@example.com", "a".repeat(244));
    assert_eq!(long_email.len(), 256);
    let cases: [(&str, Value); 17] = [
        ("name", Value::Null),
        ("name", json!("")),
        ("name", json!("   ")),
        ("name", json!("n".repeat(256))),
        ("name", json!(7)),
        ("name", json!(["Acme"])),
        ("email", Value::Null),
        ("email", json!("not-an-address")),
        ("email", json!("two@@example.com")),
        ("email", json!(long_email)),
        ("email", json!(42)),
        ("type", Value::Null),
        ("type", json!("galactic")),
        ("type", json!("personal")),
        ("type", json!("operators")),
        ("type", json!("Business")),
        ("type", json!(true)),
    ];
    for (field, value) in cases {
        let mut body = team_body();
        match value {
            Value::Null => body.as_object_mut().unwrap().remove(field),
            value => body.as_object_mut().unwrap().insert(field.into(), value),
        };
        let errors = api.expect_invalid("POST", TEAMS, Some(&body)).await;
        let keys: Vec<&String> = errors.as_object().unwrap().keys().collect();
        assert_eq!(keys, [field], "{body}: {errors}");
        assert!(errors[field][0].is_string(), "{body}: {errors}");
    }
    let errors = api.expect_invalid("POST", TEAMS, Some(&json!({}))).await;
    for field in ["name", "email", "type"] {
        assert_eq!(
            errors[field],
            json!([format!("The {field} field is required.")]),
            "{errors}"
        );
    }
    assert_eq!(teams(&api).await.len(), 1, "no invalid team was created");

    let mut longest = team_body();
    longest["name"] = json!("n".repeat(255));
    longest["type"] = json!("private");
    let created = api.expect(201, "POST", TEAMS, Some(&longest)).await;
    assert_eq!(created["data"]["name"], longest["name"]);
    assert_eq!(created["data"]["type"], "private");

    let not_an_object = api.send("POST", TEAMS, Some(&json!([team_body()]))).await;
    assert_eq!(not_an_object.status, 400, "{}", not_an_object.body);
    assert!(
        not_an_object.json["message"].is_string(),
        "{}",
        not_an_object.body
    );
});

on_both_stores!(teams_need_a_token_and_the_scope, |cms| {
    let reader = Api::new(
        &cms,
        &cms.create_token("scoped@example.com", Some("teams:read"))
            .await,
    );
    let writer = Api::new(
        &cms,
        &cms.create_token("scoped@example.com", Some("teams:write"))
            .await,
    );
    let other = Api::new(
        &cms,
        &cms.create_token("scoped@example.com", Some("sites:read"))
            .await,
    );
    let team = teams(&reader).await[0]["uuid"]
        .as_str()
        .unwrap()
        .to_string();
    let domains = domains_path(&team);
    let domain = format!("{domains}/1");
    let body = json!({"domain": "example.com"});

    let unauthenticated = json!({"message": "Unauthenticated."});
    for (method, path) in [
        ("GET", TEAMS),
        ("POST", TEAMS),
        ("GET", domains.as_str()),
        ("POST", domains.as_str()),
        ("DELETE", domain.as_str()),
    ] {
        let answer = reader
            .send_authorized(method, path, Some(&team_body()), None)
            .await;
        assert_eq!(
            (answer.status, &answer.json),
            (401, &unauthenticated),
            "{method} {path}"
        );
    }

    let forbidden = json!({"message": "This action is unauthorized."});
    for (api, method, path, body) in [
        (&other, "GET", TEAMS, None),
        (&writer, "GET", TEAMS, None),
        (&reader, "POST", TEAMS, Some(team_body())),
        (&other, "POST", TEAMS, Some(team_body())),
        (&writer, "GET", domains.as_str(), None),
        (&reader, "POST", domains.as_str(), Some(body.clone())),
        (&reader, "DELETE", domain.as_str(), None),
    ] {
        let answer = api.send(method, path, body.as_ref()).await;
        assert_eq!(
            (answer.status, &answer.json),
            (403, &forbidden),
            "{method} {path}"
        );
    }

    assert_eq!(
        teams(&reader).await.len(),
        2,
        "nothing was created: personal and Operators"
    );
    writer.expect(201, "POST", &domains, Some(&body)).await;
    assert_eq!(domain_names(&reader, &team).await, ["example.com"]);
});

on_both_stores!(a_team_s_domains_are_added_listed_and_deleted, |cms| {
    let api = Api::new(&cms, &cms.guest_token("domains@example.com").await);
    let team = create_team(&api, "Domains").await;
    let other_team = create_team(&api, "Other").await;
    let path = domains_path(&team);
    assert_eq!(domain_names(&api, &team).await, Vec::<String>::new());

    let added = api
        .expect(201, "POST", &path, Some(&json!({"domain": "Example.COM"})))
        .await;
    let domain = &added["data"];
    assert!(domain["id"].is_i64(), "{domain}");
    assert_eq!(domain["domain"], "example.com", "stored lowercase");
    assert_eq!(domain["team_uuid"], team.as_str());
    assert_record_time(&domain["created_at"], "domain created_at");
    assert_record_time(&domain["updated_at"], "domain updated_at");
    let id = domain["id"].as_i64().unwrap();
    api.expect(
        201,
        "POST",
        &path,
        Some(&json!({"domain": "fleet.acme-2.example.org"})),
    )
    .await;
    let listed = api.get_ok(&path).await;
    assert_eq!(&listed["data"][0], domain, "listed as added: {listed}");
    assert_eq!(
        domain_names(&api, &team).await,
        ["example.com", "fleet.acme-2.example.org"]
    );

    for taken in ["example.com", "EXAMPLE.com"] {
        let errors = api
            .expect_invalid("POST", &path, Some(&json!({"domain": taken})))
            .await;
        assert_eq!(
            errors,
            json!({"domain": ["The domain has already been taken."]}),
            "{taken}"
        );
    }
    let longest_label = "a".repeat(63);
    let too_long = format!(
        "{longest_label}.{longest_label}.{longest_label}.{}.com",
        "b".repeat(58)
    );
    assert_eq!(too_long.len(), 254);
    let invalid = [
        json!("-bad.com"),
        json!("bad-.com"),
        json!("nodot"),
        json!("a..b"),
        json!("example.com."),
        json!("under_score.example"),
        json!("exa mple.com"),
        json!(format!("{}.com", "a".repeat(64))),
        json!(too_long),
        json!(""),
        json!(12),
    ];
    for domain in invalid {
        let body = json!({"domain": domain});
        let errors = api.expect_invalid("POST", &path, Some(&body)).await;
        let keys: Vec<&String> = errors.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["domain"], "{body}: {errors}");
    }
    let errors = api.expect_invalid("POST", &path, Some(&json!({}))).await;
    assert_eq!(errors, json!({"domain": ["The domain field is required."]}));

    // The same domain may belong to two teams; each team deletes only its own.
    api.expect(
        201,
        "POST",
        &domains_path(&other_team),
        Some(&json!({"domain": "example.com"})),
    )
    .await;
    let through_other_team = format!("{}/{id}", domains_path(&other_team));
    api.expect(404, "DELETE", &through_other_team, None).await;

    let deleted = api
        .expect(200, "DELETE", &format!("{path}/{id}"), None)
        .await;
    assert_eq!(deleted, json!({}));
    assert_eq!(
        domain_names(&api, &team).await,
        ["fleet.acme-2.example.org"]
    );
    assert_eq!(domain_names(&api, &other_team).await, ["example.com"]);
    let again = api
        .expect(404, "DELETE", &format!("{path}/{id}"), None)
        .await;
    assert!(again["message"].is_string(), "{again}");
    for missing in ["999999", "abc", "-1", "1.5"] {
        api.expect(404, "DELETE", &format!("{path}/{missing}"), None)
            .await;
    }
});

on_both_stores!(any_member_may_change_a_team_s_domains, |cms| {
    // Operators are members of the Operators team with the role `operator`, not `owner`.
    let first = Api::new(&cms, &cms.create_token("first@example.com", None).await);
    let second = Api::new(&cms, &cms.create_token("second@example.com", None).await);
    let operators = teams(&first).await[1]["uuid"].as_str().unwrap().to_string();
    let path = domains_path(&operators);
    let added = first
        .expect(201, "POST", &path, Some(&json!({"domain": "ops.example"})))
        .await;
    assert_eq!(domain_names(&second, &operators).await, ["ops.example"]);
    let id = added["data"]["id"].as_i64().unwrap();
    assert_eq!(
        second
            .expect(200, "DELETE", &format!("{path}/{id}"), None)
            .await,
        json!({})
    );
    assert_eq!(domain_names(&first, &operators).await, Vec::<String>::new());
});

on_both_stores!(another_user_s_team_is_not_found, |cms| {
    let owner = Api::new(&cms, &cms.operator_token().await);
    let guest = Api::new(&cms, &cms.guest_token("guest@example.com").await);
    let team = create_team(&owner, "Private").await;
    let path = domains_path(&team);
    let added = owner
        .expect(
            201,
            "POST",
            &path,
            Some(&json!({"domain": "owner.example"})),
        )
        .await;
    let domain = format!("{path}/{}", added["data"]["id"]);
    let operators = teams(&owner).await[1]["uuid"].as_str().unwrap().to_string();
    let unknown = domains_path("00000000-0000-4000-8000-000000000000");
    let not_a_uuid = domains_path("not-a-uuid");

    for team_path in [&path, &domains_path(&operators), &unknown, &not_a_uuid] {
        for (method, path, body) in [
            ("GET", team_path.clone(), None),
            (
                "POST",
                team_path.clone(),
                Some(json!({"domain": "guest.example"})),
            ),
            ("DELETE", format!("{team_path}/1"), None),
        ] {
            let answer = guest.send(method, &path, body.as_ref()).await;
            assert_eq!(answer.status, 404, "{method} {path}: {}", answer.body);
            assert!(
                answer.json["message"].is_string(),
                "{method} {path}: {}",
                answer.body
            );
        }
    }
    guest.expect(404, "DELETE", &domain, None).await;
    assert_eq!(
        domain_names(&owner, &team).await,
        ["owner.example"],
        "the guest changed nothing"
    );
    assert_eq!(domain_names(&owner, &operators).await, Vec::<String>::new());
});
