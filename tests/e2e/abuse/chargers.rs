//! Abuse cases of charger credentials: no charger is open by accident, and a connection that
//! gives no credentials never takes an authenticated charger's place.

use crate::support::{Charger, Cms, Handshake, is_uuid};

/// The password `cms charger add` (`... shown only once: <password>`) or `cms charger import`
/// (`<uuid> <identity> <password>`) printed for `identity`.
fn printed_password(stdout: &str, identity: &str) -> String {
    let imported = |line: &str| {
        let mut words = line.split_whitespace();
        words.next().is_some_and(is_uuid) && words.next() == Some(identity)
    };
    let line = stdout
        .lines()
        .find(|l| l.contains("shown only once") || imported(l))
        .unwrap_or_else(|| panic!("no password for {identity} in {stdout:?}"));
    line.split_whitespace()
        .last()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_added_without_a_password_gets_a_strong_one_shown_once() {
    let cms = Cms::up().await;
    let out = cms.cli(&["charger", "add", "--identity", "CP-GEN"]).await;
    assert!(out.status.success(), "{}", out.stderr);
    let password = printed_password(&out.stdout, "CP-GEN");
    assert_eq!(password.len(), 32, "{}", out.stdout);
    assert!(password.chars().all(|c| c.is_ascii_alphanumeric()));
    cms.wait_until_known("CP-GEN").await;

    assert_eq!(Handshake::new(&cms, "CP-GEN").refused_status().await, 401);
    let mut charger = Handshake::new(&cms, "CP-GEN")
        .basic_auth("CP-GEN", &password)
        .open()
        .await
        .expect("the printed password lets the charger in");
    charger.heartbeat().await;

    // Another charger gets another password.
    let other = cms.cli(&["charger", "add", "--identity", "CP-GEN-2"]).await;
    assert_ne!(printed_password(&other.stdout, "CP-GEN-2"), password);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_without_credentials_is_made_only_on_purpose() {
    let cms = Cms::up().await;
    let open = cms
        .cli(&[
            "charger",
            "add",
            "--identity",
            "CP-BENCH",
            "--security-profile",
            "0",
        ])
        .await;
    assert!(open.status.success(), "{}", open.stderr);
    assert!(
        open.stdout.contains("security profile 0"),
        "{}",
        open.stdout
    );
    cms.wait_until_known("CP-BENCH").await;
    Charger::connect(&cms, "CP-BENCH").await.heartbeat().await;

    let both = cms
        .cli(&[
            "charger",
            "add",
            "--identity",
            "CP-BOTH",
            "--security-profile",
            "0",
            "--password",
            "sixteen-chars-ok",
        ])
        .await;
    assert!(
        !both.status.success(),
        "profile 0 with a password: {}",
        both.stdout
    );
    // A charger of profile 2 has a password too, but must come over wss: plain ws is refused
    // even with the right password.
    let tls = cms
        .cli(&[
            "charger",
            "add",
            "--identity",
            "CP-TLS",
            "--security-profile",
            "2",
        ])
        .await;
    assert!(tls.status.success(), "{}", tls.stderr);
    let password = printed_password(&tls.stdout, "CP-TLS");
    let certificate = cms
        .cli(&[
            "charger",
            "add",
            "--identity",
            "CP-CERT",
            "--security-profile",
            "3",
        ])
        .await;
    assert!(certificate.status.success(), "{}", certificate.stderr);
    cms.wait_until_known("CP-TLS").await;
    cms.wait_until_known("CP-CERT").await;
    let api = crate::support::Api::new(&cms, &cms.operator_token().await);
    let refusals = async || {
        let metrics = api.metrics().await;
        let reason = [("reason", "tls_required")];
        metrics
            .sum("cms_gateway_handshake_rejections_total", &reason)
            .unwrap_or(0.0)
    };
    let before = refusals().await;
    let plain = Handshake::new(&cms, "CP-TLS").basic_auth("CP-TLS", &password);
    assert_eq!(plain.refused_status().await, 403);
    assert_eq!(Handshake::new(&cms, "CP-CERT").refused_status().await, 403);
    // Counted once the refusal is written (the client may read it a moment before).
    crate::support::eventually("each refusal counted by its reason", async || {
        let counted = refusals().await - before;
        if counted == 2.0 {
            Ok(())
        } else {
            Err(format!("{counted} counted"))
        }
    })
    .await;
    let with_password = cms
        .cli(&[
            "charger",
            "add",
            "--identity",
            "CP-CERT-PW",
            "--security-profile",
            "3",
            "--password",
            "sixteen-chars-ok",
        ])
        .await;
    assert!(
        !with_password.status.success(),
        "a certificate charger takes no password"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_import_without_passwords_generates_them() {
    let cms = Cms::up().await;
    let file = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(file.path(), "CP-IMP-1\nCP-IMP-2,sixteen-chars-ok\n").expect("write");
    let path = file.path().display().to_string();
    let out = cms.cli(&["charger", "import", "--file", &path]).await;
    assert!(out.status.success(), "{}", out.stderr);
    let generated = printed_password(&out.stdout, "CP-IMP-1");
    assert_eq!(generated.len(), 32, "{}", out.stdout);
    let given = out
        .stdout
        .lines()
        .find(|l| l.contains("CP-IMP-2"))
        .expect("CP-IMP-2 listed");
    assert_eq!(
        given.split_whitespace().count(),
        2,
        "a given password is not printed: {given}"
    );
    cms.wait_until_known("CP-IMP-1").await;
    assert_eq!(Handshake::new(&cms, "CP-IMP-1").refused_status().await, 401);
    Handshake::new(&cms, "CP-IMP-1")
        .basic_auth("CP-IMP-1", &generated)
        .open()
        .await
        .expect("the generated password works")
        .heartbeat()
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthenticated_connection_cannot_replace_an_authenticated_charger() {
    let cms = Cms::up().await;
    let password = "correct-horse-battery-42";
    cms.add_charger_with("CP-OWNED", &["--password", password])
        .await;
    let mut charger = Handshake::new(&cms, "CP-OWNED")
        .basic_auth("CP-OWNED", password)
        .open()
        .await
        .expect("the charger connects");
    charger.heartbeat().await;

    for attempt in [
        Handshake::new(&cms, "CP-OWNED"),
        Handshake::new(&cms, "CP-OWNED").basic_auth("CP-OWNED", "not-the-password-at-all"),
        Handshake::new(&cms, "cp-owned"),
    ] {
        let status = attempt.refused_status().await;
        assert!(status == 401 || status == 404, "refused, got {status}");
    }
    // The charger's own session is untouched: not closed, still answered.
    charger
        .stay_for(std::time::Duration::from_millis(300))
        .await;
    charger.heartbeat().await;
}
