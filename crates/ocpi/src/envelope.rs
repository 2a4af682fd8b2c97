//! The response envelope every OCPI answer carries (2.2.1 part I, "Response format"):
//! `data`, `status_code`, `status_message`, `timestamp`.

use crate::status;
use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// An OCPI response's body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Envelope<T = Value> {
    #[serde(default = "none", skip_serializing_if = "Option::is_none")]
    pub data: Option<T>,
    pub status_code: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    pub timestamp: String,
}

fn none<T>() -> Option<T> {
    None
}

impl<T> Envelope<T> {
    /// 1000 with `data`.
    pub fn success(data: T) -> Self {
        Envelope {
            data: Some(data),
            status_code: status::SUCCESS,
            status_message: Some("Success".into()),
            timestamp: crate::time::format(Utc::now()),
        }
    }

    /// 1000 without data (an answer to a PUT, PATCH or DELETE).
    pub fn empty_success() -> Self {
        Envelope {
            data: None,
            status_code: status::SUCCESS,
            status_message: Some("Success".into()),
            timestamp: crate::time::format(Utc::now()),
        }
    }

    /// A failure: `code` (2xxx, 3xxx) and what went wrong.
    pub fn failure(code: u32, message: impl Into<String>) -> Self {
        Envelope {
            data: None,
            status_code: code,
            status_message: Some(message.into()),
            timestamp: crate::time::format(Utc::now()),
        }
    }

    /// Whether the peer says it succeeded (1xxx).
    pub fn is_success(&self) -> bool {
        (1000..2000).contains(&self.status_code)
    }
}
