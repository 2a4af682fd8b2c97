//! `cms charger add` and `cms token create`, run while `cms up` serves the same data dir.

use crate::support::{Api, Charger, Cms, Handshake};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_added_while_running_can_connect_at_once() {
    let cms = Cms::up().await;
    // Something is served before the charger exists.
    assert_eq!(
        Handshake::new(&cms, "CP-LATE-1").refused_status().await,
        404
    );

    cms.add_charger("CP-LATE-1").await;
    let mut charger = Charger::connect(&cms, "CP-LATE-1").await;
    charger.heartbeat().await;

    cms.add_charger_with("CP-LATE-2", &["--password", "sixteen-chars-ok"])
        .await;
    let mut charger = Handshake::new(&cms, "CP-LATE-2")
        .basic_auth("CP-LATE-2", "sixteen-chars-ok")
        .open()
        .await
        .expect("the charger added with a password connects at once");
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_created_while_running_works_at_once() {
    let cms = Cms::up().await;
    let uuid = cms.add_charger("CP-SEEN-BY-TOKEN").await;

    let token = cms.create_token("late@example.com", None).await;
    let api = Api::new(&cms, &token);
    let page = api.get_ok("/api/v3/chargers").await;
    let uuids: Vec<&str> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|c| c["uuid"].as_str())
        .collect();
    assert_eq!(
        uuids,
        [uuid.as_str()],
        "the operator sees the charger of the default site"
    );

    // A second token for the same user works too, and so does the first still.
    let second = cms
        .create_token("late@example.com", Some("chargers:read"))
        .await;
    assert_ne!(second, token);
    assert_eq!(
        Api::new(&cms, &second).get("/api/v3/chargers").await.status,
        200
    );
    assert_eq!(api.get("/api/v3/chargers").await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_identity_is_refused_with_a_message() {
    let cms = Cms::up().await;
    cms.add_charger("CP-TWICE").await;

    let again = cms.cli(&["charger", "add", "--identity", "CP-TWICE"]).await;
    assert!(
        !again.status.success(),
        "adding CP-TWICE twice succeeded: {}",
        again.stdout
    );
    let stderr = again.stderr.to_lowercase();
    assert!(
        stderr.contains("cp-twice") || stderr.contains("exist") || stderr.contains("already"),
        "stderr should say the identity is taken: {:?}",
        again.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_passwords_and_identities_are_refused() {
    let cms = Cms::up().await;

    let bad_passwords = [
        "a".repeat(15),
        "a".repeat(41),
        "sixteen:chars-ok".to_string(),
        "tab\tinside-the-password".to_string(),
        "café-is-not-ascii-pwd".to_string(),
    ];
    for (n, password) in bad_passwords.iter().enumerate() {
        let identity = format!("CP-BADPW-{n}");
        let out = cms
            .cli(&[
                "charger",
                "add",
                "--identity",
                &identity,
                "--password",
                password,
            ])
            .await;
        assert!(!out.status.success(), "password {password:?} was accepted");
    }
    let long_identity = "A".repeat(49);
    for identity in [
        long_identity.as_str(),
        "with space",
        "semi;colon",
        "slash/y",
        "",
    ] {
        let out = cms.cli(&["charger", "add", "--identity", identity]).await;
        assert!(!out.status.success(), "identity {identity:?} was accepted");
    }

    // The limits themselves are fine.
    let shortest = cms
        .add_charger_with("CP-PW-16", &["--password", &"p".repeat(16)])
        .await;
    let longest = cms
        .add_charger_with("CP-PW-40", &["--password", &"~".repeat(40)])
        .await;
    let odd = cms.add_charger("Az09*-_=:+|@.").await;

    let api = Api::new(&cms, &cms.operator_token().await);
    let page = api.get_ok("/api/v3/chargers").await;
    let mut listed: Vec<&str> = page["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|c| c["uuid"].as_str())
        .collect();
    listed.sort();
    let mut expected = vec![shortest.as_str(), longest.as_str(), odd.as_str()];
    expected.sort();
    assert_eq!(listed, expected, "only the valid chargers were added");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_scope_is_refused() {
    let cms = Cms::up().await;
    let out = cms
        .cli(&[
            "token",
            "create",
            "--email",
            "x@example.com",
            "--name",
            "X",
            "--scopes",
            "chargers:read,rockets:launch",
        ])
        .await;
    assert!(
        !out.status.success(),
        "a token with scope rockets:launch was created: {}",
        out.stdout
    );
}
