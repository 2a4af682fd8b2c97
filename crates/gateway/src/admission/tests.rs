use super::*;

const PASSWORD: &str = "0123456789abcdef";

fn registration(profile: u8) -> Registration {
    Registration {
        password_hash: matches!(profile, 1 | 2).then(|| cms_credentials::hash_secret(PASSWORD)),
        security_profile: profile,
        authorization: Default::default(),
        proxy: None,
        price_text: None,
        ocpi_location: None,
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

/// A verified client certificate's subject: these CNs and these Os.
fn subject(common_names: &[&str], organizations: &[&str]) -> ClientSubject {
    let owned = |names: &[&str]| names.iter().map(|n| n.to_string()).collect();
    ClientSubject {
        common_names: owned(common_names),
        organizations: owned(organizations),
    }
}

/// Admission with the operator's name unchecked (no `--tls-client-organization`).
fn admit(
    identity: &ChargerIdentity,
    registration: &Registration,
    transport: Transport<'_>,
    authorization: Option<&str>,
) -> Result<bool, Refusal> {
    super::admit(identity, registration, transport, authorization, None)
}

#[test]
fn profile_0_needs_no_credentials_on_either_transport() {
    let names = subject(&["CP1"], &[]);
    for transport in [Transport::Plain, Transport::Tls { client: &names }] {
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
    let none = ClientSubject::default();
    let tls = Transport::Tls { client: &none };
    assert_eq!(admit(&cp, &reg, tls, Some(&credentials)), Ok(true));
    assert_eq!(admit(&cp, &reg, tls, None), Err(Refusal::Unauthorized));
}

#[test]
fn profile_3_is_a_client_certificate_naming_the_charger() {
    let cp = id("CP1");
    let reg = registration(3);
    let mine = subject(&["CP1"], &[]);
    let theirs = subject(&["CP2"], &[]);
    assert_eq!(
        admit(&cp, &reg, Transport::Tls { client: &mine }, None),
        Ok(true)
    );
    assert_eq!(
        admit(&cp, &reg, Transport::Tls { client: &theirs }, None),
        Err(Refusal::ClientCertificateMismatch)
    );
    let both = subject(&["CP2", "CP1"], &[]);
    let none = ClientSubject::default();
    assert_eq!(
        admit(&cp, &reg, Transport::Tls { client: &both }, None),
        Err(Refusal::ClientCertificateMismatch),
        "a certificate naming several chargers admits none of them"
    );
    assert_eq!(
        admit(
            &cp,
            &reg,
            Transport::Tls { client: &none },
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
        price_text: None,
        ocpi_location: None,
    };
    let none = ClientSubject::default();
    assert_eq!(
        admit(&id("CP1"), &reg, Transport::Tls { client: &none }, None),
        Err(Refusal::Unauthorized)
    );
}

#[test]
fn a_required_organization_is_the_subject_o_of_a_profile_3_certificate() {
    let cp = id("CP1");
    let reg = registration(3);
    let operator = Some("Example CPO");
    let with = |certificate: &ClientSubject| {
        let tls = Transport::Tls {
            client: certificate,
        };
        super::admit(&cp, &reg, tls, None, operator)
    };
    assert_eq!(with(&subject(&["CP1"], &["Example CPO"])), Ok(true));
    for (certificate, what) in [
        (subject(&["CP1"], &[]), "no O at all"),
        (subject(&["CP1"], &["Other CPO"]), "another operator"),
        (
            subject(&["CP1"], &["example cpo"]),
            "the name in other case",
        ),
        (subject(&["CP1"], &["Example CPO Ltd"]), "a longer name"),
        (
            subject(&["CP1"], &["Other CPO", "Example CPO"]),
            "several operators",
        ),
    ] {
        assert_eq!(
            with(&certificate),
            Err(Refusal::ClientCertificateOrganizationMismatch),
            "{what}"
        );
    }
    // The CN is judged first: another charger's certificate is that, whatever its O.
    assert_eq!(
        with(&subject(&["CP2"], &["Example CPO"])),
        Err(Refusal::ClientCertificateMismatch)
    );
    // Unset, O is not looked at (the fleets of before the flag).
    let tls = Transport::Tls {
        client: &subject(&["CP1"], &["Other CPO"]),
    };
    assert_eq!(super::admit(&cp, &reg, tls, None, None), Ok(true));
}

#[test]
fn a_required_organization_asks_nothing_of_profiles_below_3() {
    let credentials = basic("CP1:0123456789abcdef");
    let none = ClientSubject::default();
    for profile in [1, 2] {
        let tls = Transport::Tls { client: &none };
        let admitted = super::admit(
            &id("CP1"),
            &registration(profile),
            tls,
            Some(&credentials),
            Some("Example CPO"),
        );
        assert_eq!(admitted, Ok(true), "profile {profile}");
    }
}
