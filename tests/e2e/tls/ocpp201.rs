//! OCPP 2.0.1 stations under the security profiles, as 1.6 chargers are under them
//! (profiles.rs): the `ocpp` package's v201 ChargePoint on OpenSSL gets in over the transport
//! and with the credentials its profile asks for, and is refused otherwise with the same answer
//! and the same count as a 1.6 charger. With `--tls-client-organization`, a profile-3
//! certificate must also name the operator as its subject O (OCPP 2.0.1 Part 2, A00.FR.404).

use super::python_client::{
    Presenting, attempt, expect_refused, expect_session_in, expect_tls_failure,
};
use super::{TlsCms, expect_one_rejection, rejections};
use crate::support::Api;
use cms_tls::test_pki::ClientFiles;

/// The operator's name in the tests of `--tls-client-organization`.
const OPERATOR: &str = "Example CPO";

/// A 2.0.1 station presenting `certificate`, if any.
fn station(certificate: Option<&ClientFiles>) -> Presenting<'_> {
    Presenting {
        certificate,
        ocpp201: true,
        ..Presenting::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2_0_1_station_of_profile_1_or_2_gets_in_with_its_password_and_is_refused_as_1_6_is() {
    let tls = TlsCms::up().await;
    let (p1, p2) = ("CS201-TLS-P1", "CS201-TLS-P2");
    let (uuid, password_1) = tls.add_charger(p1, 1).await;
    let (_, password_2) = tls.add_charger(p2, 2).await;
    let [password_1, password_2] =
        [password_1, password_2].map(|p| p.expect("a generated password"));
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;

    for (what, url) in [
        (
            "profile 1 over ws",
            tls.ws_url_with_password(p1, &password_1),
        ),
        (
            "profile 1 over wss",
            tls.wss_url_with_password(p1, &password_1),
        ),
        (
            "profile 2 over wss",
            tls.wss_url_with_password(p2, &password_2),
        ),
    ] {
        let outcome = attempt(pki, &url, station(None)).await;
        expect_session_in(&outcome, "ocpp2.0.1", &format!("a 2.0.1 station of {what}"));
    }
    let seen = api
        .wait_for_charger(&uuid, "known as a 2.0.1 station", |c| {
            c["ocpp_version"] == "2.0.1"
        })
        .await;
    assert_eq!(
        seen["security_profile"], 1,
        "the station in the REST API: {seen}"
    );

    let wrong = "not-the-generated-password-42";
    let attempts = [
        (
            "profile 1 without its password over ws",
            tls.cms.ocpp_url(p1),
            401,
            "unauthorized",
        ),
        (
            "profile 1 with a wrong password over wss",
            tls.wss_url_with_password(p1, wrong),
            401,
            "unauthorized",
        ),
        (
            "profile 2 with its password over plain ws",
            tls.ws_url_with_password(p2, &password_2),
            403,
            "tls_required",
        ),
        (
            "profile 2 without its password over wss",
            tls.cms.wss_url(p2),
            401,
            "unauthorized",
        ),
    ];
    let mut before = rejections(&api).await;
    for (what, url, status, reason) in attempts {
        let outcome = attempt(pki, &url, station(None)).await;
        expect_refused(&outcome, status, &format!("a 2.0.1 station of {what}"));
        before = expect_one_rejection(&api, before, reason).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2_0_1_station_of_profile_3_gets_in_with_its_own_certificate_and_no_password() {
    let tls = TlsCms::up().await;
    let identity = "CS201-TLS-P3";
    let (uuid, password) = tls.add_charger(identity, 3).await;
    assert_eq!(
        password, None,
        "profile 3 takes a certificate, not a password"
    );
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;
    let url = tls.cms.wss_url(identity);

    // No Basic credentials are asked of it; without the flag its subject O is not looked at.
    let own = pki.client(identity);
    let own_with_any_o = pki.client_of(identity, "Any CPO");
    for (what, certificate) in [
        ("its own certificate", &own),
        ("its own with some O", &own_with_any_o),
    ] {
        let outcome = attempt(pki, &url, station(Some(certificate))).await;
        expect_session_in(
            &outcome,
            "ocpp2.0.1",
            &format!("a 2.0.1 station of profile 3 with {what}"),
        );
    }
    let seen = api
        .wait_for_charger(&uuid, "known as a 2.0.1 station", |c| {
            c["ocpp_version"] == "2.0.1"
        })
        .await;
    assert_eq!(
        seen["security_profile"], 3,
        "the station in the REST API: {seen}"
    );

    let someone_else = pki.client("CS201-TLS-SOMEONE-ELSE");
    let foreign = pki.foreign_client(identity);
    let expired = pki.expired_client(identity);
    let plain = tls.cms.ocpp_url(identity);
    let forbidden = [
        ("no certificate", &url, None, "client_certificate_required"),
        (
            "another station's certificate",
            &url,
            Some(&someone_else),
            "client_certificate_mismatch",
        ),
        ("no TLS at all (plain ws)", &plain, None, "tls_required"),
    ];
    let mut before = rejections(&api).await;
    for (what, url, certificate, reason) in forbidden {
        let outcome = attempt(pki, url, station(certificate)).await;
        expect_refused(
            &outcome,
            403,
            &format!("a 2.0.1 station of profile 3 with {what}"),
        );
        before = expect_one_rejection(&api, before, reason).await;
    }
    for (what, certificate, alert) in [
        ("a certificate of another CA", &foreign, "unknown ca"),
        ("an expired certificate", &expired, "certificate expired"),
    ] {
        let outcome = attempt(pki, &url, station(Some(certificate))).await;
        expect_tls_failure(
            &outcome,
            alert,
            &format!("a 2.0.1 station of profile 3 with {what}"),
        );
        before = expect_one_rejection(&api, before, "client_certificate_invalid").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_tls_client_organization_a_profile_3_certificate_must_name_the_operator_as_its_o() {
    let tls = TlsCms::up_with_client_trust(|pki, _| {
        let ca = pki.ca_certificate().display().to_string();
        let organization = [
            "--tls-client-organization".to_string(),
            OPERATOR.to_string(),
        ];
        [
            vec!["--tls-client-ca".to_string(), ca],
            organization.to_vec(),
        ]
        .concat()
    })
    .await;
    let api = Api::new(&tls.cms, &tls.cms.operator_token().await);
    let pki = &tls.pki;

    // The 2.0.1 station and the 1.6 charger alike.
    for (identity, ocpp201, subprotocol) in [
        ("CS201-TLS-ORG", true, "ocpp2.0.1"),
        ("CP16-TLS-ORG", false, "ocpp1.6"),
    ] {
        tls.add_charger(identity, 3).await;
        let url = tls.cms.wss_url(identity);
        let presenting = |certificate| Presenting {
            certificate: Some(certificate),
            ocpp201,
            ..Presenting::default()
        };

        let ours = pki.client_of(identity, OPERATOR);
        let outcome = attempt(pki, &url, presenting(&ours)).await;
        expect_session_in(
            &outcome,
            subprotocol,
            &format!("{identity} with O={OPERATOR}"),
        );

        let without_o = pki.client(identity);
        let another_operator = pki.client_of(identity, "Other CPO");
        let mut before = rejections(&api).await;
        for (what, certificate) in [("no O", &without_o), ("O=Other CPO", &another_operator)] {
            let what = format!("{identity} with its own CN and {what}");
            let outcome = attempt(pki, &url, presenting(certificate)).await;
            expect_refused(&outcome, 403, &what);
            let body = outcome["body"].as_str().unwrap_or_default();
            assert!(
                body.contains("operator"),
                "{what}: the 403 should say why: {outcome}"
            );
            before = expect_one_rejection(&api, before, "client_certificate_organization_mismatch")
                .await;
        }
    }
    let log = tls.cms.log();
    assert!(
        log.lines().any(|l| l.contains("handshake refused")
            && l.contains("CS201-TLS-ORG")
            && l.contains("client_certificate_organization_mismatch")),
        "the refusal is logged with the station and the reason"
    );
}
