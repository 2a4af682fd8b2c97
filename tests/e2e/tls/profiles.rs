//! Each security profile as a charger on the wire sees it: let in over the transport and with
//! the credentials its profile asks for, refused (and counted) otherwise, while chargers
//! already connected carry on.

use super::python_client::{
    Presenting, attempt, expect_charging_session, expect_refused, expect_tls_failure,
};
use super::wss_charger::WssCharger;
use super::{TlsCms, expect_one_rejection, rejections};
use crate::support::{Api, boot_payload};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_2_charger_gets_in_over_wss_with_its_password_and_nowhere_else() {
    let tls = TlsCms::up().await;
    let identity = "CP-TLS-P2";
    let (uuid, password) = tls.add_charger(identity, 2).await;
    let password = password.expect("profile 2 without --password prints a generated password");
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;

    let right = tls.wss_url_with_password(identity, &password);
    let outcome = attempt(pki, &right, Presenting::default()).await;
    expect_charging_session(&outcome, "profile 2 with its password over wss");

    let url = tls.cms.wss_url(identity);
    let mut charger = WssCharger::connect(pki, &url, Some((identity, &password))).await;
    let boot = charger
        .call_result("BootNotification", boot_payload("2.0.0"))
        .await;
    assert_eq!(
        boot["status"], "Accepted",
        "BootNotification over wss: {boot}"
    );
    let seen = api
        .wait_for_charger(&uuid, "online over wss, firmware 2.0.0", |c| {
            c["connection_status"] == "online" && c["firmware_version"] == "2.0.0"
        })
        .await;
    assert_eq!(
        seen["security_profile"], 2,
        "the charger in the REST API: {seen}"
    );

    // The same charger, turned away while its wss session carries on.
    let before = rejections(&api).await;
    let plain = tls.ws_url_with_password(identity, &password);
    let outcome = attempt(pki, &plain, Presenting::default()).await;
    expect_refused(&outcome, 403, "profile 2 with its password over plain ws");
    let body = outcome["body"].as_str().unwrap_or_default();
    assert!(
        body.contains("wss"),
        "the 403 should say wss is needed: {outcome}"
    );
    let before = expect_one_rejection(&api, before, "tls_required").await;
    charger.heartbeat().await;

    let wrong = tls.wss_url_with_password(identity, "not-the-generated-password-42");
    let outcome = attempt(pki, &wrong, Presenting::default()).await;
    expect_refused(&outcome, 401, "profile 2 with a wrong password over wss");
    let before = expect_one_rejection(&api, before, "unauthorized").await;
    charger.heartbeat().await;

    let outcome = attempt(pki, &url, Presenting::default()).await;
    expect_refused(&outcome, 401, "profile 2 without a password over wss");
    expect_one_rejection(&api, before, "unauthorized").await;
    charger.heartbeat().await;

    // Who was refused and why is in the log, the password never.
    let log = tls.cms.log();
    let refused = log
        .lines()
        .filter(|l| l.contains("handshake refused") && l.contains(identity))
        .collect::<Vec<_>>();
    let reasons = ["tls_required", "unauthorized"];
    assert!(
        reasons
            .iter()
            .all(|r| refused.iter().any(|l| l.contains(r))),
        "expected log lines naming {identity} and each of {reasons:?}; saw {refused:#?}"
    );
    assert!(
        !log.contains(&password),
        "the log shows the charger's password"
    );
}

/// How a refused profile 3 attempt should end.
enum Expected {
    /// The upgrade answered 403, counted under this reason.
    Forbidden(&'static str),
    /// The TLS handshake ends with an alert saying this (in OpenSSL's words), counted as
    /// `client_certificate_invalid`.
    TlsAlert(&'static str),
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_profile_3_charger_gets_in_only_with_its_own_certificate_of_the_configured_ca() {
    let tls = TlsCms::up().await;
    let identity = "CP-TLS-P3";
    let (uuid, password) = tls.add_charger(identity, 3).await;
    assert_eq!(
        password, None,
        "profile 3 takes a certificate, not a password"
    );
    let bystander = "CP-TLS-P2-BYSTANDER";
    let (_, bystander_password) = tls.add_charger(bystander, 2).await;
    let bystander_password = bystander_password.expect("a generated password");
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;
    let bystander_url = tls.cms.wss_url(bystander);
    let credentials = Some((bystander, bystander_password.as_str()));
    let mut connected = WssCharger::connect(pki, &bystander_url, credentials).await;
    connected.heartbeat().await;

    let url = tls.cms.wss_url(identity);
    let own = pki.client(identity);
    let presenting_own = Presenting {
        certificate: Some(&own),
        ..Presenting::default()
    };
    let outcome = attempt(pki, &url, presenting_own).await;
    expect_charging_session(&outcome, "profile 3 with its own certificate");
    let seen = api
        .wait_for_charger(&uuid, "booted over wss by the Python charge point", |c| {
            c["firmware_version"] == "tls-1.0"
        })
        .await;
    assert_eq!(
        seen["security_profile"], 3,
        "the charger in the REST API: {seen}"
    );

    let someone_else = pki.client("CP-TLS-SOMEONE-ELSE");
    let expired = pki.expired_client(identity);
    let foreign = pki.foreign_client(identity);
    let plain = tls.cms.ocpp_url(identity);
    let attempts = [
        (
            "no certificate",
            &url,
            None,
            Expected::Forbidden("client_certificate_required"),
        ),
        (
            "a certificate of the CA for another identity",
            &url,
            Some(&someone_else),
            Expected::Forbidden("client_certificate_mismatch"),
        ),
        (
            "an expired certificate",
            &url,
            Some(&expired),
            Expected::TlsAlert("certificate expired"),
        ),
        (
            "a certificate of another CA",
            &url,
            Some(&foreign),
            Expected::TlsAlert("unknown ca"),
        ),
        (
            "no TLS at all (plain ws)",
            &plain,
            None,
            Expected::Forbidden("tls_required"),
        ),
    ];
    let mut before = rejections(&api).await;
    for (what, url, certificate, expected) in attempts {
        let what = format!("profile 3 with {what}");
        let presenting = Presenting {
            certificate,
            ..Presenting::default()
        };
        let outcome = attempt(pki, url, presenting).await;
        let reason = match expected {
            Expected::Forbidden(reason) => {
                expect_refused(&outcome, 403, &what);
                reason
            }
            Expected::TlsAlert(alert) => {
                expect_tls_failure(&outcome, alert, &what);
                "client_certificate_invalid"
            }
        };
        before = expect_one_rejection(&api, before, reason).await;
        // The refusal touched no one else.
        connected.heartbeat().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn profile_1_and_profile_0_chargers_get_in_over_ws_and_wss_alike() {
    let tls = TlsCms::up().await;
    let (_, password) = tls.add_charger("CP-TLS-P1", 1).await;
    let password = password.expect("profile 1 without --password prints a generated password");
    tls.add_charger("CP-TLS-P0", 0).await;
    let pki = &tls.pki;

    for (what, url) in [
        (
            "profile 1 over ws",
            tls.ws_url_with_password("CP-TLS-P1", &password),
        ),
        (
            "profile 1 over wss",
            tls.wss_url_with_password("CP-TLS-P1", &password),
        ),
        ("profile 0 over ws", tls.cms.ocpp_url("CP-TLS-P0")),
        ("profile 0 over wss", tls.cms.wss_url("CP-TLS-P0")),
    ] {
        let outcome = attempt(pki, &url, Presenting::default()).await;
        expect_charging_session(&outcome, what);
    }

    // TLS does not stand in for the password.
    let outcome = attempt(pki, &tls.cms.wss_url("CP-TLS-P1"), Presenting::default()).await;
    expect_refused(&outcome, 401, "profile 1 without its password over wss");
}
