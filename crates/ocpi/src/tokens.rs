//! The tokens module's objects (OCPI 2.2.1): the Token an eMSP pushes, checked field by field
//! as the spec bounds them, a PATCH applied to one, and what a real-time authorisation sends
//! (LocationReferences) and gets back (AuthorizationInfo).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How a token identifies its driver (`TokenType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TokenType {
    AdHocUser,
    AppUser,
    Other,
    Rfid,
}

impl TokenType {
    pub const ALL: [TokenType; 4] = [
        TokenType::AdHocUser,
        TokenType::AppUser,
        TokenType::Other,
        TokenType::Rfid,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TokenType::AdHocUser => "AD_HOC_USER",
            TokenType::AppUser => "APP_USER",
            TokenType::Other => "OTHER",
            TokenType::Rfid => "RFID",
        }
    }

    pub fn parse(text: &str) -> Option<TokenType> {
        TokenType::ALL.into_iter().find(|t| t.as_str() == text)
    }
}

/// When the CPO may authorise a token from its own copy (`WhitelistType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WhitelistType {
    /// From the copy only: no real-time authorisation.
    Always,
    /// From the copy, or real-time: the CPO chooses (cms: from the copy).
    Allowed,
    /// Real-time; from the copy when the eMSP cannot be reached.
    AllowedOffline,
    /// Real-time only.
    Never,
}

impl WhitelistType {
    pub const ALL: [WhitelistType; 4] = [
        WhitelistType::Always,
        WhitelistType::Allowed,
        WhitelistType::AllowedOffline,
        WhitelistType::Never,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            WhitelistType::Always => "ALWAYS",
            WhitelistType::Allowed => "ALLOWED",
            WhitelistType::AllowedOffline => "ALLOWED_OFFLINE",
            WhitelistType::Never => "NEVER",
        }
    }

    pub fn parse(text: &str) -> Option<WhitelistType> {
        WhitelistType::ALL.into_iter().find(|w| w.as_str() == text)
    }

    /// Whether a use of the token asks the eMSP first.
    pub fn asks_in_real_time(self) -> bool {
        matches!(self, WhitelistType::AllowedOffline | WhitelistType::Never)
    }
}

/// A driver's default charging preference (sessions module's `ProfileType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ProfileType {
    Cheap,
    Fast,
    Green,
    Regular,
}

/// The driver's own energy supplier and contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnergyContract {
    pub supplier_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract_id: Option<String>,
}

/// A token of an eMSP's driver, as pushed to the CPO.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Token {
    pub country_code: String,
    pub party_id: String,
    pub uid: String,
    #[serde(rename = "type")]
    pub token_type: TokenType,
    pub contract_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visual_number: Option<String>,
    pub issuer: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    pub valid: bool,
    pub whitelist: WhitelistType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_profile_type: Option<ProfileType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_contract: Option<EnergyContract>,
    #[serde(with = "datetime")]
    pub last_updated: DateTime<Utc>,
}

impl Token {
    /// A JSON body read as a Token and checked; the error names what is wrong.
    pub fn from_json(value: Value) -> Result<Token, String> {
        let token: Token = serde_json::from_value(value).map_err(|e| e.to_string())?;
        token.check()?;
        Ok(token)
    }

    /// The lengths and characters the spec gives each field: CiString(n) printable ASCII,
    /// string(n) printable text, both at most n characters; country_code exactly 2 and
    /// party_id exactly 3.
    pub fn check(&self) -> Result<(), String> {
        exactly("country_code", &self.country_code, 2)?;
        exactly("party_id", &self.party_id, 3)?;
        ci_string("uid", &self.uid, 36)?;
        if self.uid.is_empty() {
            return Err("uid: must not be empty".into());
        }
        ci_string("contract_id", &self.contract_id, 36)?;
        if let Some(visual) = &self.visual_number {
            string("visual_number", visual, 64)?;
        }
        string("issuer", &self.issuer, 64)?;
        if let Some(group) = &self.group_id {
            ci_string("group_id", group, 36)?;
        }
        if let Some(language) = &self.language {
            exactly("language", language, 2)?;
        }
        if let Some(contract) = &self.energy_contract {
            string("energy_contract.supplier_name", &contract.supplier_name, 64)?;
            if let Some(id) = &contract.contract_id {
                string("energy_contract.contract_id", id, 64)?;
            }
        }
        Ok(())
    }

    /// This token with a PATCH's fields in place of its own (2.2.1: the fields present are
    /// updated, the others kept; `last_updated` must be present). The result is checked as a
    /// whole token.
    pub fn patched(&self, patch: &Value) -> Result<Token, String> {
        let Some(fields) = patch.as_object() else {
            return Err("a PATCH body is a JSON object".into());
        };
        if !fields.contains_key("last_updated") {
            return Err("last_updated: a PATCH must carry it".into());
        }
        let mut whole = serde_json::to_value(self).map_err(|e| e.to_string())?;
        if let Some(object) = whole.as_object_mut() {
            for (name, value) in fields {
                object.insert(name.clone(), value.clone());
            }
        }
        Token::from_json(whole)
    }
}

fn exactly(field: &str, text: &str, length: usize) -> Result<(), String> {
    ci_string(field, text, length)?;
    match text.len() == length {
        true => Ok(()),
        false => Err(format!("{field}: must be {length} characters")),
    }
}

fn ci_string(field: &str, text: &str, max: usize) -> Result<(), String> {
    if !text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(format!("{field}: printable ASCII only"));
    }
    match text.len() <= max {
        true => Ok(()),
        false => Err(format!("{field}: at most {max} characters")),
    }
}

fn string(field: &str, text: &str, max: usize) -> Result<(), String> {
    if text.chars().any(char::is_control) {
        return Err(format!("{field}: printable characters only"));
    }
    match text.chars().count() <= max {
        true => Ok(()),
        false => Err(format!("{field}: at most {max} characters")),
    }
}

/// What a real-time authorisation is asked for: the location (cms: the site's uuid) and its
/// EVSEs (cms: the charger's uuid).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocationReferences {
    pub location_id: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evse_uids: Vec<String>,
}

/// The eMSP's word on a token in a real-time authorisation (`AllowedType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AllowedType {
    Allowed,
    Blocked,
    Expired,
    NoCredit,
    NotAllowed,
}

impl AllowedType {
    pub fn as_str(self) -> &'static str {
        match self {
            AllowedType::Allowed => "ALLOWED",
            AllowedType::Blocked => "BLOCKED",
            AllowedType::Expired => "EXPIRED",
            AllowedType::NoCredit => "NO_CREDIT",
            AllowedType::NotAllowed => "NOT_ALLOWED",
        }
    }
}

/// The answer to a real-time authorisation, as far as cms reads it (the token and the display
/// text it may carry are not used).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorizationInfo {
    pub allowed: AllowedType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_reference: Option<String>,
}

/// OCPI DateTime fields: written as [`crate::time::format`], read as [`crate::time::parse`].
mod datetime {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::time::format(*t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = String::deserialize(d)?;
        crate::time::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("not an OCPI DateTime: {text:?}")))
    }
}

#[cfg(test)]
mod tests;
