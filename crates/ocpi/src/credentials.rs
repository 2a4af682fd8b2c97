//! The credentials module's objects (2.2.1 part "credentials"): what two parties exchange to
//! register with each other.

use serde::{Deserialize, Serialize};

/// A party's credentials: the token the other party is to call it with, its versions URL, and
/// the roles it plays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    pub token: String,
    pub url: String,
    pub roles: Vec<CredentialsRole>,
}

/// One role of a party, under its identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CredentialsRole {
    /// `CPO`, `EMSP`, `HUB`, `NAP`, `NSP`, `OTHER`, `SCSP`.
    pub role: String,
    pub business_details: BusinessDetails,
    pub party_id: String,
    pub country_code: String,
}

/// Who a party is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusinessDetails {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    /// An image; kept as sent (cms never sends one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logo: Option<serde_json::Value>,
}

/// The most roles one party's credentials name (2.2.1's roles are seven; a hub has several
/// parties, each once).
const MAX_ROLES: usize = 100;

impl Credentials {
    /// What is wrong with credentials a party sent, as the 2001 message says it: the token
    /// (1 to 64 printable characters), the URL (http or https), the roles (at least one, each
    /// with a 2-letter country and 3-character party id).
    pub fn problem(&self) -> Option<String> {
        let printable = |t: &str| t.chars().all(|c| c.is_ascii_graphic());
        if self.token.is_empty() || self.token.len() > 64 || !printable(&self.token) {
            return Some("token must be 1 to 64 printable ASCII characters".into());
        }
        if !(self.url.starts_with("http://") || self.url.starts_with("https://"))
            || self.url.len() > 255
        {
            return Some("url must be an http(s) URL of at most 255 characters".into());
        }
        if self.roles.is_empty() || self.roles.len() > MAX_ROLES {
            return Some(format!("roles must name 1 to {MAX_ROLES} roles"));
        }
        for role in &self.roles {
            let alnum =
                |t: &str, n: usize| t.len() == n && t.chars().all(|c| c.is_ascii_alphanumeric());
            if !alnum(&role.country_code, 2) || !alnum(&role.party_id, 3) {
                return Some(
                    "each role needs a 2-letter country_code and a 3-character party_id".into(),
                );
            }
            let details = &role.business_details;
            if details.name.is_empty() || details.name.len() > 100 {
                return Some("each role's business_details needs a name of at most 100".into());
            }
            if details.website.as_ref().is_some_and(|w| w.len() > 255) {
                return Some("a website is at most 255 characters".into());
            }
        }
        None
    }

    /// Whether the credentials name this party (case-insensitive, as OCPI's CiString).
    pub fn names(&self, country_code: &str, party_id: &str) -> bool {
        self.roles.iter().any(|r| {
            r.country_code.eq_ignore_ascii_case(country_code)
                && r.party_id.eq_ignore_ascii_case(party_id)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials() -> Credentials {
        serde_json::from_value(serde_json::json!({
            "token": "abc", "url": "https://emsp.example/ocpi/versions",
            "roles": [{"role": "EMSP", "party_id": "EMP", "country_code": "NL",
                       "business_details": {"name": "An eMSP"}}]
        }))
        .unwrap()
    }

    #[test]
    fn credentials_are_checked_and_matched_to_a_party() {
        assert_eq!(credentials().problem(), None);
        assert!(credentials().names("nl", "emp"));
        assert!(!credentials().names("DE", "EMP"));
        let mut bad = credentials();
        bad.url = "ftp://x".into();
        assert!(bad.problem().unwrap().contains("url"));
        let mut bad = credentials();
        bad.roles[0].party_id = "TOOLONG".into();
        assert!(bad.problem().unwrap().contains("party_id"));
        let mut bad = credentials();
        bad.url = format!("https://e.example/{}", "v".repeat(255));
        assert!(bad.problem().unwrap().contains("url"));
        let mut bad = credentials();
        bad.roles[0].business_details.name = "n".repeat(101);
        assert!(bad.problem().unwrap().contains("name"));
        let mut bad = credentials();
        bad.token = "x".repeat(65);
        assert!(bad.problem().unwrap().contains("token"));
    }
}
