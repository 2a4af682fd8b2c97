//! A team's id tags (`/api/v3/teams/{team_uuid}/id-tags`) as a client and an operator with
//! `cms id-tag import` see them: who may charge at the team's sites.

use crate::support::rest::{sorted_keys, team_of_type, uuid_of};
use crate::support::{Api, Cms, assert_record_time, on_both_stores};
use serde_json::{Value, json};

fn tags_path(team_uuid: &str) -> String {
    format!("/api/v3/teams/{team_uuid}/id-tags")
}

/// The caller's personal team's uuid.
async fn personal_team(api: &Api) -> String {
    uuid_of(&team_of_type(api, "personal").await)
}

/// Every field of an id tag, with its type.
fn assert_tag_shape(tag: &Value) {
    assert_eq!(
        sorted_keys(tag),
        [
            "created_at",
            "expiry_date",
            "id_tag",
            "name",
            "parent_id_tag",
            "status",
            "updated_at"
        ]
    );
    assert!(
        tag["id_tag"].is_string() && tag["status"].is_string(),
        "{tag}"
    );
    assert_record_time(&tag["created_at"], "created_at");
    assert_record_time(&tag["updated_at"], "updated_at");
}

/// The tags of a team as its list shows them, every page.
async fn tag_names(api: &Api, team: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut next = Some(format!("{}?page=1", tags_path(team)));
    while let Some(page) = next {
        let listed = api.get_ok(&page).await;
        for tag in listed["data"].as_array().expect("a data array") {
            names.push(tag["id_tag"].as_str().expect("id_tag").to_string());
        }
        next = listed["links"]["next"].as_str().map(str::to_string);
    }
    names
}

on_both_stores!(id_tags_are_created_shown_replaced_and_deleted, |cms| {
    let api = Api::new(&cms, &cms.guest_token("tags@example.com").await);
    let team = personal_team(&api).await;
    let path = tags_path(&team);

    let body = json!({
        "id_tag": "04A2b3C4", "status": "Blocked", "expiry_date": "2026-11-21T11:00:00.5+01:00",
        "parent_id_tag": "FLEET-1", "name": "Van 12"
    });
    let created = api.expect(201, "POST", &path, Some(&body)).await["data"].clone();
    assert_tag_shape(&created);
    assert_eq!(created["id_tag"], "04A2b3C4", "kept as written");
    assert_eq!(created["status"], "Blocked");
    assert_eq!(
        created["expiry_date"], "2026-11-21T10:00:00Z",
        "UTC, whole seconds"
    );
    assert_eq!(
        (&created["parent_id_tag"], &created["name"]),
        (&json!("FLEET-1"), &json!("Van 12"))
    );

    let minimal = api
        .expect(201, "POST", &path, Some(&json!({"id_tag": "card-2"})))
        .await["data"]
        .clone();
    assert_eq!(minimal["status"], "Accepted", "the default status");
    for field in ["expiry_date", "parent_id_tag", "name"] {
        assert_eq!(minimal[field], Value::Null, "{field}");
    }

    // The path names the tag in any case, as a charger would.
    let tag_path = format!("{path}/04a2B3c4");
    let shown = api.get_ok(&tag_path).await["data"].clone();
    assert_eq!(shown, created);

    let replaced = api
        .expect(200, "PUT", &tag_path, Some(&json!({"status": "Expired"})))
        .await["data"]
        .clone();
    assert_tag_shape(&replaced);
    assert_eq!(
        replaced["id_tag"], "04A2b3C4",
        "a body without the tag keeps it"
    );
    assert_eq!(replaced["status"], "Expired");
    for field in ["expiry_date", "parent_id_tag", "name"] {
        assert_eq!(replaced[field], Value::Null, "PUT replaces {field}");
    }
    assert_eq!(replaced["created_at"], created["created_at"]);
    let recased = api
        .expect(200, "PUT", &tag_path, Some(&json!({"id_tag": "04A2B3C4"})))
        .await["data"]
        .clone();
    assert_eq!(recased["id_tag"], "04A2B3C4", "the case may change");
    assert_eq!(recased["status"], "Accepted", "PUT takes the defaults");
    let renamed = api
        .expect_invalid("PUT", &tag_path, Some(&json!({"id_tag": "other"})))
        .await;
    assert_eq!(
        sorted_keys(&renamed),
        ["id_tag"],
        "a tag cannot be renamed: {renamed}"
    );
    assert_eq!(api.get_ok(&tag_path).await["data"]["id_tag"], "04A2B3C4");

    assert_eq!(api.expect(200, "DELETE", &tag_path, None).await, json!({}));
    let gone = api.expect(404, "GET", &tag_path, None).await;
    assert_eq!(gone, json!({"message": "Id tag not found."}));
    api.expect(404, "DELETE", &tag_path, None).await;
    api.expect(404, "PUT", &tag_path, Some(&json!({}))).await;
    assert_eq!(tag_names(&api, &team).await, ["card-2"]);
});

on_both_stores!(a_tag_is_unique_in_its_team_in_any_case, |cms| {
    let api = Api::new(&cms, &cms.guest_token("unique@example.com").await);
    let other = Api::new(&cms, &cms.guest_token("other@example.com").await);
    let team = personal_team(&api).await;
    let other_team = personal_team(&other).await;
    api.expect(
        201,
        "POST",
        &tags_path(&team),
        Some(&json!({"id_tag": "ABC123"})),
    )
    .await;
    let taken = api
        .expect(
            422,
            "POST",
            &tags_path(&team),
            Some(&json!({"id_tag": "abc123"})),
        )
        .await;
    assert_eq!(
        taken,
        json!({
            "message": "The id tag has already been taken.",
            "errors": {"id_tag": ["The id tag has already been taken."]}
        })
    );
    other
        .expect(
            201,
            "POST",
            &tags_path(&other_team),
            Some(&json!({"id_tag": "abc123"})),
        )
        .await;
    assert_eq!(tag_names(&api, &team).await, ["ABC123"]);
    assert_eq!(tag_names(&other, &other_team).await, ["abc123"]);
});

on_both_stores!(each_invalid_field_is_named, |cms| {
    let api = Api::new(&cms, &cms.guest_token("rules@example.com").await);
    let team = personal_team(&api).await;
    let path = tags_path(&team);
    let ascii = "The id tag field must be printable ASCII characters without spaces.";
    let cases = [
        (json!({}), "id_tag", "The id tag field is required."),
        (
            json!({"id_tag": ""}),
            "id_tag",
            "The id tag field is required.",
        ),
        (
            json!({"id_tag": "x".repeat(21)}),
            "id_tag",
            "The id tag field must not be greater than 20 characters.",
        ),
        (json!({"id_tag": "has space"}), "id_tag", ascii),
        (json!({"id_tag": "kaart-é"}), "id_tag", ascii),
        (
            json!({"id_tag": 1234}),
            "id_tag",
            "The id tag field must be a string.",
        ),
        (
            json!({"id_tag": "ok", "status": "ConcurrentTx"}),
            "status",
            "The selected status is invalid.",
        ),
        (
            json!({"id_tag": "ok", "status": null}),
            "status",
            "The status field must not be null.",
        ),
        (
            json!({"id_tag": "ok", "expiry_date": "2026-11-21"}),
            "expiry_date",
            "The expiry date field must be an RFC 3339 date-time, like 2026-11-21T10:00:00Z.",
        ),
        (
            // 10000-01-01 in UTC: no charger could read it back.
            json!({"id_tag": "ok", "expiry_date": "9999-12-31T23:59:59-01:00"}),
            "expiry_date",
            "The expiry date field must fall within the years 0000 to 9999 in UTC.",
        ),
        (
            json!({"id_tag": "ok", "parent_id_tag": "a b"}),
            "parent_id_tag",
            "The parent id tag field must be printable ASCII characters without spaces.",
        ),
        (
            json!({"id_tag": "ok", "name": "n".repeat(256)}),
            "name",
            "The name field must not be greater than 255 characters.",
        ),
    ];
    for (body, field, message) in cases {
        let errors = api.expect_invalid("POST", &path, Some(&body)).await;
        assert_eq!(errors, json!({field: [message]}), "{body}");
    }
    let all = json!({"id_tag": " ", "status": "ok", "expiry_date": "soon", "name": []});
    let errors = api.expect_invalid("POST", &path, Some(&all)).await;
    assert_eq!(
        sorted_keys(&errors),
        ["expiry_date", "id_tag", "name", "status"],
        "every failing field at once"
    );
    let fine = json!({"id_tag": "ok", "expiry_date": null, "parent_id_tag": null, "name": ""});
    let created = api.expect(201, "POST", &path, Some(&fine)).await;
    assert_eq!(
        created["data"]["name"],
        Value::Null,
        "an empty name is none"
    );
    assert_eq!(
        tag_names(&api, &team).await,
        ["ok"],
        "nothing else was made"
    );
});

on_both_stores!(tags_are_listed_25_a_page_by_tag, |cms| {
    let api = Api::new(&cms, &cms.guest_token("pages@example.com").await);
    let team = personal_team(&api).await;
    let path = tags_path(&team);
    for i in (0..27).rev() {
        let tag = if i % 2 == 0 {
            format!("card-{i:02}")
        } else {
            format!("CARD-{i:02}")
        };
        api.expect(201, "POST", &path, Some(&json!({"id_tag": tag})))
            .await;
    }
    let first = api.get_ok(&path).await;
    let data = first["data"].as_array().expect("data");
    assert_eq!(data.len(), 25);
    data.iter().for_each(assert_tag_shape);
    assert_eq!(data[0]["id_tag"], "card-00", "ordered by tag in any case");
    assert_eq!(data[1]["id_tag"], "CARD-01");
    assert_eq!(first["meta"]["per_page"], 25);
    assert_eq!(
        (&first["meta"]["from"], &first["meta"]["to"]),
        (&json!(1), &json!(25))
    );
    assert_eq!(first["links"]["next"], format!("{path}?page=2"));
    assert_eq!(first["links"]["last"], format!("{path}?page=2"));
    let second = api.get_ok(&format!("{path}?page=2")).await;
    let rest: Vec<&Value> = second["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|t| &t["id_tag"])
        .collect();
    assert_eq!(rest, [&json!("CARD-25"), &json!("card-26")]);
    assert_eq!(second["links"]["next"], Value::Null);
    let errors = api
        .expect_invalid("GET", &format!("{path}?page=0"), None)
        .await;
    assert!(errors.get("page").is_some(), "{errors}");
});

on_both_stores!(tags_need_a_member_of_the_team_and_the_teams_scopes, |cms| {
    let owner = Api::new(&cms, &cms.guest_token("owner@example.com").await);
    let stranger = Api::new(&cms, &cms.guest_token("stranger@example.com").await);
    let team = personal_team(&owner).await;
    let path = tags_path(&team);
    owner
        .expect(201, "POST", &path, Some(&json!({"id_tag": "mine"})))
        .await;
    let tag = format!("{path}/mine");
    let body = json!({"id_tag": "theirs"});

    let unknown = tags_path("00000000-0000-4000-8000-000000000000");
    for team_path in [path.clone(), unknown] {
        for (method, path, body) in [
            ("GET", team_path.clone(), None),
            ("POST", team_path.clone(), Some(body.clone())),
            ("GET", format!("{team_path}/mine"), None),
            (
                "PUT",
                format!("{team_path}/mine"),
                Some(json!({"status": "Blocked"})),
            ),
            ("DELETE", format!("{team_path}/mine"), None),
        ] {
            let answer = stranger.send(method, &path, body.as_ref()).await;
            assert_eq!(
                (answer.status, &answer.json),
                (404, &json!({"message": "Team not found."})),
                "{method} {path}"
            );
        }
    }

    let reader = Api::new(
        &cms,
        &cms.create_token("owner@example.com", Some("teams:read"))
            .await,
    );
    let writer = Api::new(
        &cms,
        &cms.create_token("owner@example.com", Some("teams:write"))
            .await,
    );
    let sites = Api::new(
        &cms,
        &cms.create_token("owner@example.com", Some("sites:write"))
            .await,
    );
    let forbidden = json!({"message": "This action is unauthorized."});
    for (api, method, path, body) in [
        (&writer, "GET", path.as_str(), None),
        (&sites, "GET", tag.as_str(), None),
        (&reader, "POST", path.as_str(), Some(body.clone())),
        (
            &reader,
            "PUT",
            tag.as_str(),
            Some(json!({"status": "Blocked"})),
        ),
        (&reader, "DELETE", tag.as_str(), None),
        // The scope is checked before the team: no probing of teams without it.
        (
            &reader,
            "POST",
            "/api/v3/teams/00000000-0000-4000-8000-000000000000/id-tags",
            Some(body.clone()),
        ),
    ] {
        let answer = api.send(method, path, body.as_ref()).await;
        assert_eq!(
            (answer.status, &answer.json),
            (403, &forbidden),
            "{method} {path}"
        );
    }
    let unauthenticated = owner.send_authorized("GET", &path, None, None).await;
    assert_eq!(unauthenticated.status, 401);

    assert_eq!(tag_names(&reader, &team).await, ["mine"], "nothing changed");
    assert_eq!(reader.get_ok(&tag).await["data"]["status"], "Accepted");
    writer.expect(201, "POST", &path, Some(&body)).await;
    assert_eq!(tag_names(&reader, &team).await, ["mine", "theirs"]);
});

/// Writes `text` to a CSV file in a new temporary directory.
fn csv_file(text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = dir.path().join("tags.csv");
    std::fs::write(&file, text).expect("the file is written");
    (dir, file.display().to_string())
}

async fn import(cms: &Cms, team: &str, file: &str) -> crate::support::CliOutput {
    cms.cli(&["id-tag", "import", "--team", team, file]).await
}

on_both_stores!(
    an_import_creates_and_replaces_tags_or_refuses_the_whole_file,
    |cms| {
        let api = Api::new(&cms, &cms.guest_token("import@example.com").await);
        let team = personal_team(&api).await;
        let path = tags_path(&team);
        api.expect(
            201,
            "POST",
            &path,
            Some(&json!({"id_tag": "KNOWN", "name": "old"})),
        )
        .await;

        let good = "id_tag,status,expiry_date,parent_id_tag,name\n\
                known,Blocked,,,\"Doe, Jane\"\n\
                new-1,,2027-01-01T00:00:00+01:00,FLEET,\n\
                new-2,Expired,,,\"Line\nbreak\"\n";
        let (_dir, file) = csv_file(good);
        let out = import(&cms, &team, &file).await;
        assert!(out.status.success(), "{}", out.stderr);
        assert_eq!(out.last_line(), "imported 3 id tags (2 created, 1 updated)");
        let known = api.get_ok(&format!("{path}/KNOWN")).await["data"].clone();
        assert_eq!(
            (&known["id_tag"], &known["status"], &known["name"]),
            (&json!("known"), &json!("Blocked"), &json!("Doe, Jane"))
        );
        let new = api.get_ok(&format!("{path}/NEW-1")).await["data"].clone();
        assert_eq!(
            (&new["status"], &new["expiry_date"], &new["parent_id_tag"]),
            (
                &json!("Accepted"),
                &json!("2026-12-31T23:00:00Z"),
                &json!("FLEET")
            )
        );
        assert_eq!(
            api.get_ok(&format!("{path}/new-2")).await["data"]["name"],
            "Line\nbreak"
        );

        let listed = cms.cli(&["id-tag", "list", "--team", &team]).await;
        assert!(listed.status.success(), "{}", listed.stderr);
        let lines: Vec<&str> = listed.stdout.lines().collect();
        assert_eq!(lines[0], "id_tag\tstatus\texpiry_date\tparent_id_tag\tname");
        assert_eq!(lines[1], "known\tBlocked\t-\t-\tDoe, Jane");
        assert_eq!(lines.len(), 4, "{}", listed.stdout);

        let bad = "id_tag,status\nfresh,Accepted\nwith space,Accepted\nfine,Maybe\n";
        let (_bad_dir, bad_file) = csv_file(bad);
        let out = import(&cms, &team, &bad_file).await;
        assert!(
            !out.status.success(),
            "a bad file is refused: {}",
            out.stdout
        );
        assert!(
            out.stderr
                .contains("line 3: The id tag field must be printable ASCII"),
            "{}",
            out.stderr
        );
        assert!(
            out.stderr
                .contains("line 4: The selected status is invalid."),
            "{}",
            out.stderr
        );
        assert!(out.stderr.contains("no tag was imported"), "{}", out.stderr);
        assert_eq!(
            api.get(&format!("{path}/fresh")).await.status,
            404,
            "not even the good row"
        );
        assert_eq!(tag_names(&api, &team).await, ["known", "new-1", "new-2"]);

        let nobody = import(&cms, "00000000-0000-4000-8000-000000000000", &file).await;
        assert!(!nobody.status.success());
        assert!(
            nobody.stderr.contains("there is no team"),
            "{}",
            nobody.stderr
        );
    }
);
