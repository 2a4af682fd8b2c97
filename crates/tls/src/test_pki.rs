//! A throwaway PKI for tests (feature `test-util`): a root CA, a server chain for `127.0.0.1`
//! and `localhost`, client certificates for a Common Name, and the wrong kinds of client
//! certificate, all written as PEM files that rustls, Python's `ssl` or curl can load.
//!
//! Files in the directory: `ca.pem` (the root: what clients trust, and the client CA),
//! `server.pem` (server certificate, then the intermediate that issued it), `server.key`
//! (PKCS#8), `other-ca.pem` (a root nobody trusts), `crl.pem` (the root's CRL: empty until
//! [`TestPki::revoke`]) and one `client-*.pem`/`.key` pair per client certificate issued.
//! Helpers panic on failure: they are for tests.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, SystemTime};

use rcgen::{
    BasicConstraints, CertificateParams, CertificateRevocationListParams, CertifiedIssuer, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyIdMethod, KeyPair, KeyUsagePurpose, RevocationReason,
    RevokedCertParams, SanType, SerialNumber, date_time_ymd,
};
use rustls::pki_types::pem::PemObject;
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

use crate::TlsFiles;

type Ca = CertifiedIssuer<'static, KeyPair>;

pub struct TestPki {
    dir: PathBuf,
    root: Ca,
    server_issuer: Ca,
    other_root: Ca,
    /// Numbers server generations (each expires a year later) and client files.
    issued: AtomicU32,
    /// Serial numbers of the root's certificates that `crl.pem` revokes.
    revoked: Mutex<Vec<SerialNumber>>,
}

/// A client certificate and its key, as PEM files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFiles {
    pub certificate: PathBuf,
    pub private_key: PathBuf,
}

/// The first server certificate's notAfter year; each replacement adds one.
pub const FIRST_SERVER_NOT_AFTER_YEAR: i32 = 2100;

impl TestPki {
    /// Makes the CAs and a first server certificate, and writes them into `dir`.
    pub fn create(dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).expect("create the PKI directory");
        let root = ca("cms test root", None);
        let server_issuer = ca("cms test server intermediate", Some(&root));
        let other_root = ca("someone else's root", None);
        write(&dir.join("ca.pem"), &root.pem());
        write(&dir.join("other-ca.pem"), &other_root.pem());
        let pki = TestPki {
            dir,
            root,
            server_issuer,
            other_root,
            issued: AtomicU32::new(0),
            revoked: Mutex::new(Vec::new()),
        };
        pki.replace_server_certificate();
        pki.write_crl(&[]);
        pki
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The root CA: for clients to trust the server, and as the server's client CA.
    pub fn ca_certificate(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A root that signs nothing the server trusts (the issuer of [`TestPki::foreign_client`]).
    pub fn other_ca_certificate(&self) -> PathBuf {
        self.dir.join("other-ca.pem")
    }

    /// The root's certificate revocation list (PEM): empty until [`TestPki::revoke`].
    pub fn crl(&self) -> PathBuf {
        self.dir.join("crl.pem")
    }

    /// Adds a client certificate of the root CA to `crl.pem`, rewritten by a rename.
    pub fn revoke(&self, client: &ClientFiles) {
        let pem = std::fs::read(&client.certificate).expect("the client certificate");
        let der = rustls::pki_types::CertificateDer::from_pem_slice(&pem).expect("PEM");
        let (_, certificate) = X509Certificate::from_der(&der).expect("a certificate");
        let serial = SerialNumber::from_slice(certificate.raw_serial());
        let mut revoked = self.revoked.lock().expect("not poisoned");
        revoked.push(serial);
        self.write_crl(&revoked);
    }

    fn write_crl(&self, serials: &[SerialNumber]) {
        let params = CertificateRevocationListParams {
            this_update: date_time_ymd(2024, 1, 1),
            next_update: date_time_ymd(2100, 1, 1),
            crl_number: SerialNumber::from(serials.len() as u64 + 1),
            issuing_distribution_point: None,
            revoked_certs: serials
                .iter()
                .map(|serial| RevokedCertParams {
                    serial_number: serial.clone(),
                    revocation_time: date_time_ymd(2024, 6, 1),
                    reason_code: Some(RevocationReason::KeyCompromise),
                    invalidity_date: None,
                })
                .collect(),
            key_identifier_method: KeyIdMethod::Sha256,
        };
        let crl = params.signed_by(&self.root).expect("a CRL");
        write(&self.crl(), &crl.pem().expect("CRL PEM"));
    }

    pub fn server_chain(&self) -> PathBuf {
        self.dir.join("server.pem")
    }

    pub fn server_key(&self) -> PathBuf {
        self.dir.join("server.key")
    }

    /// A server that asks clients for a certificate from [`TestPki::ca_certificate`].
    pub fn server_files(&self) -> TlsFiles {
        self.server_files_without_client_ca()
            .with_client_ca(self.ca_certificate())
    }

    pub fn server_files_without_client_ca(&self) -> TlsFiles {
        TlsFiles::new(self.server_chain(), self.server_key())
    }

    /// Writes a new server key and certificate over `server.pem` and `server.key` (each by a
    /// rename, as a certificate manager would) and returns the new certificate's notAfter
    /// year: `FIRST_SERVER_NOT_AFTER_YEAR` for the first, one more for each replacement.
    pub fn replace_server_certificate(&self) -> i32 {
        let generation = self.issued.fetch_add(1, Ordering::Relaxed);
        let not_after_year = FIRST_SERVER_NOT_AFTER_YEAR + generation as i32;
        let mut params = params_for("cms test server");
        params.subject_alt_names = vec![
            SanType::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()),
            SanType::DnsName("localhost".try_into().expect("a DNS name")),
        ];
        params.not_after = date_time_ymd(not_after_year, 1, 1);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().expect("server key");
        let certificate = params
            .signed_by(&key, &self.server_issuer)
            .expect("server cert");
        let chain = certificate.pem() + &self.server_issuer.pem();
        write(&self.server_chain(), &chain);
        write(&self.server_key(), &key.serialize_pem());
        not_after_year
    }

    /// A valid client certificate with subject `CN=common_name`, issued by the root CA.
    pub fn client(&self, common_name: &str) -> ClientFiles {
        self.issue_client("client", common_name, &self.root, Validity::Default)
    }

    /// A valid client certificate of the root CA with subject `CN=common_name, O=organization`
    /// (OCPP security profile 3: O names the charging station operator).
    pub fn client_of(&self, common_name: &str, organization: &str) -> ClientFiles {
        let subject = Subject {
            common_name,
            organization: Some(organization),
        };
        self.issue("client", subject, &self.root, Validity::Default)
    }

    /// A client certificate of the root CA that expired on 2021-01-01.
    pub fn expired_client(&self, common_name: &str) -> ClientFiles {
        let validity = Validity::Years(2020, 2021);
        self.issue_client("expired", common_name, &self.root, validity)
    }

    /// A client certificate of the root CA that stops being valid `valid_for` from now (to the
    /// second, rounded down).
    pub fn short_lived_client(&self, common_name: &str, valid_for: Duration) -> ClientFiles {
        let since_epoch = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .expect("after 1970");
        let until = (since_epoch + valid_for).as_secs();
        self.issue_client("short", common_name, &self.root, Validity::UntilUnix(until))
    }

    /// A client certificate issued by a CA the server does not trust.
    pub fn foreign_client(&self, common_name: &str) -> ClientFiles {
        self.issue_client("foreign", common_name, &self.other_root, Validity::Default)
    }

    fn issue_client(
        &self,
        kind: &str,
        common_name: &str,
        issuer: &Ca,
        validity: Validity,
    ) -> ClientFiles {
        let subject = Subject {
            common_name,
            organization: None,
        };
        self.issue(kind, subject, issuer, validity)
    }

    fn issue(&self, kind: &str, subject: Subject, issuer: &Ca, validity: Validity) -> ClientFiles {
        let common_name = subject.common_name;
        let mut params = params_for(common_name);
        if let Some(organization) = subject.organization {
            params
                .distinguished_name
                .push(DnType::OrganizationName, organization);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        match validity {
            Validity::Default => {}
            Validity::UntilUnix(seconds) => {
                params.not_after = date_time_ymd(1970, 1, 1) + Duration::from_secs(seconds);
            }
            Validity::Years(from, until) => {
                params.not_before = date_time_ymd(from, 1, 1);
                params.not_after = date_time_ymd(until, 1, 1);
            }
        }
        let key = KeyPair::generate().expect("client key");
        let certificate = params.signed_by(&key, issuer).expect("client certificate");
        let n = self.issued.fetch_add(1, Ordering::Relaxed);
        let name: String = common_name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let stem = format!("client-{kind}-{n}-{name}");
        let files = ClientFiles {
            certificate: self.dir.join(format!("{stem}.pem")),
            private_key: self.dir.join(format!("{stem}.key")),
        };
        write(&files.certificate, &certificate.pem());
        write(&files.private_key, &key.serialize_pem());
        files
    }
}

/// Whom a client certificate names.
struct Subject<'a> {
    common_name: &'a str,
    organization: Option<&'a str>,
}

/// When a client certificate is valid.
enum Validity {
    /// rcgen's: 1975 to 4096.
    Default,
    /// From rcgen's start until this Unix time.
    UntilUnix(u64),
    /// From January 1st of the first year to January 1st of the second.
    Years(i32, i32),
}

/// Parameters for `CN=common_name` that pass OpenSSL's strict verification
/// (`VERIFY_X509_STRICT`, on by default in Python 3.13's `ssl.create_default_context`), which
/// wants an Authority Key Identifier on every issued certificate.
fn params_for(common_name: &str) -> CertificateParams {
    let mut params = CertificateParams::default();
    params.distinguished_name = rcgen::DistinguishedName::new();
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.use_authority_key_identifier_extension = true;
    params
}

/// A CA certificate: a root when `parent` is `None`, else an intermediate that signs leaves.
fn ca(common_name: &str, parent: Option<&Ca>) -> Ca {
    let mut params = params_for(common_name);
    params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let key = KeyPair::generate().expect("CA key");
    match parent {
        None => {
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            CertifiedIssuer::self_signed(params, key).expect("root CA")
        }
        Some(parent) => {
            params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
            CertifiedIssuer::signed_by(params, key, parent).expect("intermediate CA")
        }
    }
}

/// Written beside and renamed over, so a watcher never reads half a file.
fn write(path: &Path, contents: &str) {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, contents).expect("write a PKI file");
    std::fs::rename(&partial, path).expect("rename a PKI file into place");
}
