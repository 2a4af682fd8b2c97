//! A CA made here signs CSRs made by rcgen and by the openssl command line; the CSRs the
//! security part rules out are refused with their reason.

use super::*;
use rcgen::{CertifiedIssuer, DistinguishedName};
use std::process::Command;
use x509_parser::extensions::ParsedExtension;

struct Ca {
    dir: tempfile::TempDir,
    ca: StationCa,
}

fn ca(days: u32) -> Ca {
    let dir = tempfile::tempdir().unwrap();
    let mut params = CertificateParams::default();
    params
        .distinguished_name
        .push(DnType::CommonName, "Station CA");
    params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).unwrap();
    let key_pem = key.serialize_pem();
    let issuer = CertifiedIssuer::self_signed(params, key).unwrap();
    std::fs::write(dir.path().join("ca.pem"), issuer.pem()).unwrap();
    std::fs::write(dir.path().join("ca.key"), key_pem).unwrap();
    let ca = StationCa::load(&dir.path().join("ca.pem"), &dir.path().join("ca.key"), days).unwrap();
    Ca { dir, ca }
}

fn csr(alg: &'static SignatureAlgorithm, subject: &[(DnType, &str)]) -> String {
    let key = KeyPair::generate_for(alg).unwrap();
    let mut params = CertificateParams::default();
    params.distinguished_name = DistinguishedName::new();
    for (kind, value) in subject {
        params.distinguished_name.push(kind.clone(), *value);
    }
    params.serialize_request(&key).unwrap().pem().unwrap()
}

fn station_subject() -> Vec<(DnType, &'static str)> {
    vec![
        (DnType::CommonName, "CS-1"),
        (DnType::OrganizationName, "Example CPO"),
    ]
}

/// A CSR made by `openssl req` with an RSA key of `bits`.
fn openssl_csr(dir: &Path, bits: u32, subject: &str) -> String {
    let key = dir.join(format!("rsa{bits}.key"));
    let out = Command::new("openssl")
        .args(["req", "-new", "-newkey", &format!("rsa:{bits}"), "-nodes"])
        .args(["-subj", subject, "-keyout"])
        .arg(&key)
        .output()
        .expect("the openssl command line");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn an_ec_csr_of_the_station_is_signed_as_a_client_certificate_of_the_ca() {
    let Ca { ca, .. } = ca(30);
    for alg in [
        &rcgen::PKCS_ECDSA_P256_SHA256,
        &rcgen::PKCS_ECDSA_P384_SHA384,
    ] {
        let checked = check_csr(&csr(alg, &station_subject()), "CS-1").unwrap();
        let signed = ca.sign(&checked).unwrap();
        let chain: Vec<_> = CertificateDer::pem_slice_iter(signed.chain_pem.as_bytes())
            .map(Result::unwrap)
            .collect();
        assert_eq!(chain.len(), 2, "the certificate, then the CA's");
        let (_, leaf) = x509_parser::parse_x509_certificate(&chain[0]).unwrap();
        let (_, root) = x509_parser::parse_x509_certificate(&chain[1]).unwrap();
        leaf.verify_signature(Some(root.public_key())).unwrap();
        assert_eq!(leaf.issuer(), root.subject());
        let cn = leaf.subject().iter_common_name().next().unwrap();
        assert_eq!(cn.as_str().unwrap(), "CS-1");
        let left = leaf.validity().not_after.timestamp() - Utc::now().timestamp();
        assert!(
            (left - 30 * 86_400).abs() < 60,
            "30 days from now: {left} s"
        );
        let client_auth = leaf
            .extensions()
            .iter()
            .any(|e| match e.parsed_extension() {
                ParsedExtension::ExtendedKeyUsage(eku) => eku.client_auth,
                _ => false,
            });
        assert!(client_auth);
        assert_eq!(signed.serial, hex(leaf.raw_serial()));
        assert_eq!(
            signed.not_after.timestamp(),
            leaf.validity().not_after.timestamp()
        );
        assert_eq!(signed.fingerprint.len(), 64);
    }
}

#[test]
fn an_rsa_csr_of_2048_bits_made_by_openssl_is_signed_and_one_of_1024_refused() {
    let Ca { ca, dir } = ca(365);
    let good = openssl_csr(dir.path(), 2048, "/CN=CS-1/O=Example CPO");
    ca.sign(&check_csr(&good, "CS-1").unwrap()).unwrap();
    // The same request as base64 DER, without PEM's armour.
    let der: String = good.lines().filter(|l| !l.starts_with("-----")).collect();
    check_csr(&der, "CS-1").unwrap();
    let small = openssl_csr(dir.path(), 1024, "/CN=CS-1/O=Example CPO");
    let refused = check_csr(&small, "CS-1").err().unwrap();
    assert_eq!(refused.0, "its RSA key has 1024 bits, fewer than 2048");
}

#[test]
fn a_csr_the_security_part_rules_out_is_refused_with_its_reason() {
    let p256 = &rcgen::PKCS_ECDSA_P256_SHA256;
    let refusal = |text: &str| check_csr(text, "CS-1").err().unwrap().0;
    assert_eq!(
        refusal(&csr(
            p256,
            &[
                (DnType::CommonName, "CS-2"),
                (DnType::OrganizationName, "X")
            ]
        )),
        "its subject's CN is Some(\"CS-2\"), not the station's identity"
    );
    assert_eq!(
        refusal(&csr(p256, &[(DnType::CommonName, "CS-1")])),
        "its subject names no Organization (O)"
    );
    assert_eq!(
        refusal(&csr(&rcgen::PKCS_ED25519, &station_subject())),
        "its key is neither RSA nor EC"
    );
    assert_eq!(refusal("not a request"), "neither PEM nor base64 DER");
    // A request whose signature was tampered with (its last byte, in the signature).
    let good = csr(p256, &station_subject());
    let mut der = CertificateSigningRequestDer::from_pem_slice(good.as_bytes())
        .unwrap()
        .as_ref()
        .to_vec();
    *der.last_mut().unwrap() ^= 0x01;
    let tampered = base64::engine::general_purpose::STANDARD.encode(&der);
    assert_eq!(refusal(&tampered), "its signature does not verify");
}

#[test]
fn a_ca_key_that_is_not_the_certificates_is_refused_at_load() {
    let Ca { dir, .. } = ca(1);
    let other = KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).unwrap();
    std::fs::write(dir.path().join("other.key"), other.serialize_pem()).unwrap();
    let loaded = StationCa::load(&dir.path().join("ca.pem"), &dir.path().join("other.key"), 1);
    let message = loaded.err().unwrap().to_string();
    assert!(
        message.contains("not the key of the CA's certificate"),
        "{message}"
    );
}
