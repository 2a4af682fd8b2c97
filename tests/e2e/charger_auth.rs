//! Chargers registered with a password must present it (HTTP Basic) to connect.

use crate::support::{Charger, Cms, Handshake};

const PASSWORD: &str = "correct-horse-battery-42";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_right_password_lets_the_charger_in() {
    let cms = Cms::up().await;
    cms.add_charger_with("CP-AUTH-1", &["--password", PASSWORD])
        .await;

    let mut charger = Handshake::new(&cms, "CP-AUTH-1")
        .basic_auth("CP-AUTH-1", PASSWORD)
        .open()
        .await
        .expect("the right credentials are accepted");
    charger
        .call_result("BootNotification", crate::support::boot_payload("1.0.0"))
        .await;
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_or_missing_credentials_are_refused_with_401() {
    let cms = Cms::up().await;
    cms.add_charger_with("CP-AUTH-2", &["--password", PASSWORD])
        .await;
    cms.add_charger_with("CP-AUTH-3", &["--password", PASSWORD])
        .await;

    let missing = Handshake::new(&cms, "CP-AUTH-2");
    assert_eq!(
        missing.refused_status().await,
        401,
        "no Authorization header"
    );

    let wrong_password =
        Handshake::new(&cms, "CP-AUTH-2").basic_auth("CP-AUTH-2", "correct-horse-battery-43");
    assert_eq!(wrong_password.refused_status().await, 401, "wrong password");

    // Another charger's identity with the right password is still the wrong user.
    let wrong_user = Handshake::new(&cms, "CP-AUTH-2").basic_auth("CP-AUTH-3", PASSWORD);
    assert_eq!(wrong_user.refused_status().await, 401, "wrong user");

    // None of that locked the charger out.
    let right = Handshake::new(&cms, "CP-AUTH-2").basic_auth("CP-AUTH-2", PASSWORD);
    let mut charger = right
        .open()
        .await
        .expect("the right credentials are accepted");
    charger.heartbeat().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_charger_without_password_needs_no_credentials() {
    let cms = Cms::up().await;
    cms.add_charger("CP-AUTH-OPEN").await;

    let mut charger = Charger::connect(&cms, "CP-AUTH-OPEN").await;
    charger.heartbeat().await;
}
