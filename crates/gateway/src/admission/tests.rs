use super::*;

const PASSWORD: &str = "0123456789abcdef";

fn registration(profile: u8) -> Registration {
    Registration {
        password_hash: matches!(profile, 1 | 2).then(|| cms_credentials::hash_secret(PASSWORD)),
        security_profile: profile,
        authorization: Default::default(),
        proxy: None,
    }
}

fn basic(user_pass: &str) -> String {
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(user_pass)
    )
}

fn id(identity: &str) -> ChargerIdentity {
    ChargerIdentity::parse(identity).unwrap()
}

#[test]
fn profile_0_needs_no_credentials_on_either_transport() {
    let names = ["CP1".to_string()];
    for transport in [
        Transport::Plain,
        Transport::Tls {
            client_names: &names,
        },
    ] {
        assert_eq!(
            admit(&id("CP1"), &registration(0), transport, None),
            Ok(false)
        );
    }
}

#[test]
fn basic_auth_needs_the_identity_and_the_right_password() {
    let cp = id("CP:1");
    let reg = registration(1);
    let plain = Transport::Plain;
    assert_eq!(
        admit(&cp, &reg, plain, Some(&basic("CP:1:0123456789abcdef"))),
        Ok(true)
    );
    for wrong in [
        Some(basic("CP:1:0123456789abcdeX")),
        Some(basic("CP2:0123456789abcdef")),
        Some("Bearer xyz".to_string()),
        Some("Basic !!!".to_string()),
        None,
    ] {
        assert_eq!(
            admit(&cp, &reg, plain, wrong.as_deref()),
            Err(Refusal::Unauthorized),
            "{wrong:?}"
        );
    }
}

#[test]
fn profile_2_is_basic_auth_over_tls_only() {
    let cp = id("CP1");
    let reg = registration(2);
    let credentials = basic("CP1:0123456789abcdef");
    assert_eq!(
        admit(&cp, &reg, Transport::Plain, Some(&credentials)),
        Err(Refusal::TlsRequired),
        "the right password on plain ws is still refused"
    );
    let tls = Transport::Tls { client_names: &[] };
    assert_eq!(admit(&cp, &reg, tls, Some(&credentials)), Ok(true));
    assert_eq!(admit(&cp, &reg, tls, None), Err(Refusal::Unauthorized));
}

#[test]
fn profile_3_is_a_client_certificate_naming_the_charger() {
    let cp = id("CP1");
    let reg = registration(3);
    let mine = ["CP1".to_string()];
    let theirs = ["CP2".to_string()];
    assert_eq!(
        admit(
            &cp,
            &reg,
            Transport::Tls {
                client_names: &mine
            },
            None
        ),
        Ok(true)
    );
    assert_eq!(
        admit(
            &cp,
            &reg,
            Transport::Tls {
                client_names: &theirs
            },
            None
        ),
        Err(Refusal::ClientCertificateMismatch)
    );
    let both = ["CP2".to_string(), "CP1".to_string()];
    assert_eq!(
        admit(
            &cp,
            &reg,
            Transport::Tls {
                client_names: &both
            },
            None
        ),
        Err(Refusal::ClientCertificateMismatch),
        "a certificate naming several chargers admits none of them"
    );
    assert_eq!(
        admit(
            &cp,
            &reg,
            Transport::Tls { client_names: &[] },
            Some(&basic("CP1:x"))
        ),
        Err(Refusal::ClientCertificateRequired),
        "a password does not stand in for the certificate"
    );
    assert_eq!(
        admit(&cp, &reg, Transport::Plain, None),
        Err(Refusal::TlsRequired)
    );
}

#[test]
fn an_unknown_profile_lets_nobody_in() {
    let reg = Registration {
        password_hash: None,
        security_profile: 7,
        authorization: Default::default(),
        proxy: None,
    };
    assert_eq!(
        admit(&id("CP1"), &reg, Transport::Tls { client_names: &[] }, None),
        Err(Refusal::Unauthorized)
    );
}
