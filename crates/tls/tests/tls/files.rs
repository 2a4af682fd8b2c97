//! What an operator reads when a TLS file is wrong: the file, and what is wrong with it.

use cms_tls::test_pki::TestPki;
use cms_tls::{ServerTls, TlsError, TlsFiles};

const NOT_DER: &str = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";

fn refusal(files: TlsFiles) -> TlsError {
    ServerTls::load("ocpp", files).expect_err("the files were accepted")
}

#[test]
fn a_missing_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let absent = dir.path().join("absent.pem");

    let error = refusal(TlsFiles::new(&absent, pki.server_key()));

    assert!(matches!(error, TlsError::Missing { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!("{}: no such file", absent.display())
    );
}

#[test]
fn a_certificate_file_without_a_certificate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());

    // The key file given for both: a common slip when flags are swapped.
    let error = refusal(TlsFiles::new(pki.server_key(), pki.server_key()));

    assert!(matches!(error, TlsError::NoCertificate { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with(&pki.server_key().display().to_string())
    );
}

#[test]
fn a_key_file_without_a_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());

    let error = refusal(TlsFiles::new(pki.server_chain(), pki.server_chain()));

    assert!(matches!(error, TlsError::NoPrivateKey { .. }), "{error:?}");
    assert!(
        error.to_string().contains("PKCS#8, PKCS#1 or SEC1"),
        "{error}"
    );
}

#[test]
fn a_key_that_does_not_match_the_certificate_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let someone_else = pki.client("CP-0042");

    let error = refusal(TlsFiles::new(pki.server_chain(), &someone_else.private_key));

    assert!(matches!(error, TlsError::KeyMismatch { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "{}: the private key does not match the certificate in {}",
            someone_else.private_key.display(),
            pki.server_chain().display()
        )
    );
}

#[test]
fn a_truncated_pem_file_is_refused_as_not_pem() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let pem = std::fs::read_to_string(pki.server_chain()).unwrap();
    let truncated = dir.path().join("truncated.pem");
    std::fs::write(&truncated, &pem[..pem.find("-----END").unwrap() / 2]).unwrap();

    let error = refusal(TlsFiles::new(&truncated, pki.server_key()));

    assert!(matches!(error, TlsError::NotPem { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .ends_with("not valid PEM: a CERTIFICATE block has no END line"),
        "{error}"
    );
}

#[test]
fn a_client_ca_bundle_that_is_no_ca_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let empty = dir.path().join("empty-ca.pem");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage-ca.pem");
    std::fs::write(&garbage, NOT_DER).unwrap();

    let without_certificates = refusal(pki.server_files_without_client_ca().with_client_ca(&empty));
    let unparsable = refusal(
        pki.server_files_without_client_ca()
            .with_client_ca(&garbage),
    );

    assert!(
        matches!(without_certificates, TlsError::NoCertificate { .. }),
        "{without_certificates:?}"
    );
    assert!(
        matches!(unparsable, TlsError::BadClientCa { .. }),
        "{unparsable:?}"
    );
    assert!(
        unparsable
            .to_string()
            .starts_with(&format!("{}: bad client CA", garbage.display()))
    );
}

#[test]
fn a_certificate_that_is_not_x509_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let garbage = dir.path().join("garbage.pem");
    std::fs::write(&garbage, NOT_DER).unwrap();

    let error = refusal(TlsFiles::new(&garbage, pki.server_key()));

    assert!(
        matches!(error, TlsError::BadCertificate { .. }),
        "{error:?}"
    );
}

#[test]
fn a_crl_file_that_holds_no_crl_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let pki = TestPki::create(dir.path());
    let empty = dir.path().join("empty-crl.pem");
    std::fs::write(&empty, "").unwrap();
    let garbage = dir.path().join("garbage-crl.pem");
    std::fs::write(
        &garbage,
        "-----BEGIN X509 CRL-----\nAAAA\n-----END X509 CRL-----\n",
    )
    .unwrap();

    let without_crls = refusal(pki.server_files().with_client_crl(&empty));
    let unparsable = refusal(pki.server_files().with_client_crl(&garbage));

    assert!(
        matches!(without_crls, TlsError::NoCrl { .. }),
        "{without_crls:?}"
    );
    assert!(
        without_crls.to_string().starts_with(&format!(
            "{}: no certificate revocation list",
            empty.display()
        )),
        "{without_crls}"
    );
    assert!(
        matches!(unparsable, TlsError::BadCrl { .. }),
        "{unparsable:?}"
    );
    assert!(
        unparsable.to_string().starts_with(&format!(
            "{}: bad certificate revocation list",
            garbage.display()
        )),
        "{unparsable}"
    );
}
