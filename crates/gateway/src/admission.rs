//! Who may connect, and how: the OCPP security profiles, the same for 1.6 chargers and 2.0.1
//! stations (the version is agreed after admission). A registered charger is let in only over
//! the transport and with the credentials its profile asks for; one that comes in below its
//! profile is refused, whatever else it offers.
//!
//! | profile | transport | credentials |
//! |---|---|---|
//! | 0 | ws or wss | none (test benches) |
//! | 1 | ws or wss | HTTP Basic: identity and password |
//! | 2 | wss only | HTTP Basic: identity and password |
//! | 3 | wss only | a client certificate of the configured CA whose subject CN is the identity and, with `--tls-client-organization`, whose subject O is the operator's name; no password is asked for |

use crate::directory::Registration;
use crate::identity::ChargerIdentity;
use base64::Engine;

/// The subject of a client certificate the TLS layer verified against the configured CA (or a
/// trusted proxy forwarded), reduced to what admission reads; empty when the client presented
/// none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientSubject {
    /// Its Common Names (CN): one, the charger's identity (A00.FR.405).
    pub common_names: Vec<String>,
    /// Its organizationNames (O): one, the charging station operator's (A00.FR.404).
    pub organizations: Vec<String>,
}

impl From<&cms_tls::ClientCertificate> for ClientSubject {
    fn from(certificate: &cms_tls::ClientCertificate) -> Self {
        ClientSubject {
            common_names: certificate.common_names().to_vec(),
            organizations: certificate.organizations().to_vec(),
        }
    }
}

/// How a connection reached the gateway.
#[derive(Debug, Clone, Copy)]
pub enum Transport<'a> {
    Plain,
    /// TLS, with the subject of the client's certificate.
    Tls {
        client: &'a ClientSubject,
    },
}

/// Why a registered charger is turned away; `label` names it in metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Missing or wrong Basic-auth credentials (401, with a challenge).
    Unauthorized,
    /// A profile 2 or 3 charger on plain ws.
    TlsRequired,
    /// A profile 3 charger that presented no client certificate.
    ClientCertificateRequired,
    /// A profile 3 charger whose certificate names another charger.
    ClientCertificateMismatch,
    /// A profile 3 charger whose certificate does not name the operator of
    /// `--tls-client-organization` as its subject O.
    ClientCertificateOrganizationMismatch,
    /// A client certificate forwarded by a trusted proxy that does not verify against the
    /// client CA.
    ClientCertificateInvalid,
}

impl Refusal {
    pub fn label(self) -> &'static str {
        match self {
            Refusal::Unauthorized => "unauthorized",
            Refusal::TlsRequired => "tls_required",
            Refusal::ClientCertificateRequired => "client_certificate_required",
            Refusal::ClientCertificateMismatch => "client_certificate_mismatch",
            Refusal::ClientCertificateOrganizationMismatch => {
                "client_certificate_organization_mismatch"
            }
            Refusal::ClientCertificateInvalid => "client_certificate_invalid",
        }
    }

    /// The HTTP status line and body the charger is answered with, before any upgrade.
    pub fn answer(self) -> (&'static str, &'static str) {
        match self {
            Refusal::Unauthorized => ("401 Unauthorized", "unauthorized\n"),
            Refusal::TlsRequired => (
                "403 Forbidden",
                "this charger's security profile needs wss (TLS)\n",
            ),
            Refusal::ClientCertificateRequired => (
                "403 Forbidden",
                "this charger's security profile needs a client certificate\n",
            ),
            Refusal::ClientCertificateMismatch => (
                "403 Forbidden",
                "the client certificate is not this charger's\n",
            ),
            Refusal::ClientCertificateOrganizationMismatch => (
                "403 Forbidden",
                "the client certificate's subject O is not this operator's\n",
            ),
            Refusal::ClientCertificateInvalid => (
                "403 Forbidden",
                "the forwarded client certificate does not verify\n",
            ),
        }
    }
}

/// Admits a registered charger, or says why not. `Ok(true)` when it proved who it is (a
/// password or a certificate), `Ok(false)` for a profile 0 charger. `organization` is the
/// operator's name a profile-3 certificate must carry as its subject O
/// (`--tls-client-organization`); `None` leaves O unread.
pub fn admit(
    identity: &ChargerIdentity,
    registration: &Registration,
    transport: Transport<'_>,
    authorization: Option<&str>,
    organization: Option<&str>,
) -> Result<bool, Refusal> {
    let tls_client = match transport {
        Transport::Tls { client } => Some(client),
        Transport::Plain => None,
    };
    let tls_names = tls_client.map(|client| client.common_names.as_slice());
    match registration.security_profile {
        0 => Ok(false),
        1 => basic_auth(identity, registration, authorization).map(|()| true),
        2 => {
            tls_names.ok_or(Refusal::TlsRequired)?;
            basic_auth(identity, registration, authorization).map(|()| true)
        }
        3 => match tls_names {
            None => Err(Refusal::TlsRequired),
            Some([]) => Err(Refusal::ClientCertificateRequired),
            // Exactly one Common Name, the charger's: a subject with several names identifies
            // no one (which of them would count is a guess), so it admits none of them.
            Some([name]) if name == identity.as_str() => {
                let organizations = tls_client.map_or(&[][..], |c| &c.organizations);
                operator_named(organizations, organization).map(|()| true)
            }
            Some(_) => Err(Refusal::ClientCertificateMismatch),
        },
        // A profile this gateway does not know: nothing it could check lets the charger in.
        _ => Err(Refusal::Unauthorized),
    }
}

/// A00.FR.404's check, when an operator's name is set: the subject holds exactly one O, that
/// name, byte for byte (several would be a guess, as for CNs; "contains" in the requirement's
/// words is read as "holds", not as a substring, which "Not Example CPO" would pass).
fn operator_named(organizations: &[String], operator: Option<&str>) -> Result<(), Refusal> {
    match (operator, organizations) {
        (None, _) => Ok(()),
        (Some(operator), [name]) if name == operator => Ok(()),
        (Some(_), _) => Err(Refusal::ClientCertificateOrganizationMismatch),
    }
}

/// `Authorization: Basic base64(identity:password)` with the registered password.
fn basic_auth(
    identity: &ChargerIdentity,
    registration: &Registration,
    header: Option<&str>,
) -> Result<(), Refusal> {
    let stored = registration
        .password_hash
        .as_deref()
        .ok_or(Refusal::Unauthorized)?;
    let encoded = header
        .and_then(|h| {
            let (scheme, rest) = h.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("basic").then_some(rest.trim())
        })
        .ok_or(Refusal::Unauthorized)?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()
        .and_then(|d| String::from_utf8(d).ok())
        .ok_or(Refusal::Unauthorized)?;
    // Passwords never hold ':' while identities may, so the last ':' is the separator.
    let (user, password) = decoded.rsplit_once(':').ok_or(Refusal::Unauthorized)?;
    let right = user == identity.as_str()
        && cms_credentials::verify_secret(password, stored).unwrap_or(false);
    right.then_some(()).ok_or(Refusal::Unauthorized)
}

#[cfg(test)]
mod tests;
