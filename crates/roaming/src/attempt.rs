//! One attempt of a push: the party's URL and headers, the request, and what came of it. A
//! push is taken when the party answers HTTP 2xx with an OCPI envelope whose `status_code` is
//! 1xxx; anything else (another status, a 2xxx or 3xxx code, no envelope, no answer) is a
//! failed attempt, retried after the next of the retry delays, or failed after the last. A
//! push that cannot be sent at all (the party gone or without the module's endpoint) fails at
//! once, so the next push of its object may go.

use crate::client::{Answer, Client};
use chrono::Utc;
use cms_ocpi::token_header::header_value;
use cms_store::ocpi::pushes::{DuePush, PushAttempt, PushOutcome};
use cms_store::{Store, format_record_time};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// An attempt that ended, to be recorded.
pub(crate) struct Ended {
    /// Its (provider, object): busy until the attempt is recorded.
    pub key: (i64, String),
    pub module: String,
    /// What to record; `None` when the store could not be read (tried again, not counted).
    pub attempt: Option<PushAttempt>,
    /// Its outcome as `cms_ocpi_pushes_total` counts it.
    pub counted: &'static str,
}

/// How far an attempt got.
enum Sent {
    Taken,
    /// Tried and failed: retried, or failed after the last delay.
    Refused(String),
    /// Cannot be sent at all: failed at once.
    Unsendable(String),
    /// The store could not be read: tried again later, as if not attempted.
    NotNow(String),
}

/// Sends `push` once; what came of it.
pub(crate) async fn attempt(
    store: &Store,
    client: &Client,
    retry_delays: &[Duration],
    push: DuePush,
) -> Ended {
    let sent = send(store, client, &push).await;
    let (outcome, error, counted) = match sent {
        Sent::Taken => (PushOutcome::Delivered, None, "delivered"),
        Sent::Refused(error) => match retry_delays.get(push.attempts as usize) {
            Some(wait) => {
                let at = format_record_time(Utc::now() + jittered(*wait));
                (PushOutcome::Retry { at }, Some(error), "retried")
            }
            None => (PushOutcome::Failed, Some(error), "failed"),
        },
        Sent::Unsendable(error) => (PushOutcome::Failed, Some(error), "failed"),
        Sent::NotNow(error) => {
            tracing::warn!(%error, push = push.id, "OCPI dispatcher: cannot read a push's party");
            return Ended {
                key: (push.provider_id, push.object_key),
                module: push.module,
                attempt: None,
                counted: "retried",
            };
        }
    };
    Ended {
        attempt: Some(PushAttempt {
            push_id: push.id,
            outcome,
            error,
        }),
        key: (push.provider_id, push.object_key),
        module: push.module,
        counted,
    }
}

async fn send(store: &Store, client: &Client, push: &DuePush) -> Sent {
    let party = match store.ocpi_party_of_provider(push.provider_id).await {
        Ok(Some(party)) if party.is_registered() => party,
        Ok(_) => return Sent::Unsendable("the provider is not registered over OCPI".into()),
        Err(error) => return Sent::NotNow(error.to_string()),
    };
    let Some(token) = party.outgoing_token.as_deref() else {
        return Sent::Unsendable("cms has no token to call the party with".into());
    };
    let (Some(from_country), Some(from_party)) = (&push.cpo_country_code, &push.cpo_party_id)
    else {
        return Sent::Unsendable("the team has no OCPI identity (country code, party id)".into());
    };
    let url = if push.module == "url" {
        push.path.clone()
    } else {
        match party.endpoint(&push.module, "RECEIVER") {
            Some(base) => join(&base, &push.path),
            None => {
                return Sent::Unsendable(format!(
                    "the party has no {} RECEIVER endpoint",
                    push.module
                ));
            }
        }
    };
    let headers = [
        ("authorization", header_value(token)),
        ("x-request-id", uuid::Uuid::new_v4().to_string()),
        ("x-correlation-id", correlation_id(push)),
        ("ocpi-from-country-code", from_country.clone()),
        ("ocpi-from-party-id", from_party.clone()),
        ("ocpi-to-country-code", party.country_code.clone()),
        ("ocpi-to-party-id", party.party_id.clone()),
    ];
    match client
        .send(&push.method, &url, &headers, push.body.clone())
        .await
    {
        Ok(answer) => match judge(&answer) {
            Ok(()) => Sent::Taken,
            Err(error) => Sent::Refused(error),
        },
        Err(error) => Sent::Refused(error),
    }
}

/// The module's URL and what follows it. With nothing after it (a CDR's POST) the URL exactly
/// as the party listed it: some frameworks list `.../cdrs/` and answer `.../cdrs` with a
/// redirect, which cms does not follow.
fn join(base: &str, path: &str) -> String {
    if path.is_empty() {
        return base.to_string();
    }
    let base = base.trim_end_matches('/');
    match path.strip_prefix('/') {
        Some(rest) => format!("{base}/{rest}"),
        None => format!("{base}/{path}"),
    }
}

#[cfg(test)]
#[test]
fn a_push_goes_to_the_module_url_as_listed_when_nothing_follows_it() {
    assert_eq!(
        join("https://e.example/cdrs/", ""),
        "https://e.example/cdrs/"
    );
    assert_eq!(join("https://e.example/cdrs", ""), "https://e.example/cdrs");
    assert_eq!(
        join("https://e.example/loc/", "/NL/CMS/1"),
        "https://e.example/loc/NL/CMS/1"
    );
    assert_eq!(
        join("https://e.example/loc", "NL/CMS/1"),
        "https://e.example/loc/NL/CMS/1"
    );
}

/// The push's `X-Correlation-ID`: the same on every attempt, after a restart too (made from
/// the push's row), a UUID as OCPI asks.
fn correlation_id(push: &DuePush) -> String {
    let digest = Sha256::digest(format!("ocpi-push:{}:{}", push.id, push.created_at));
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    uuid::Builder::from_custom_bytes(bytes)
        .into_uuid()
        .to_string()
}

/// Whether the party took the push: `Err` says why not, as the push log shows it.
fn judge(answer: &Answer) -> Result<(), String> {
    let envelope: Option<Value> = serde_json::from_str(&answer.body).ok();
    let code = (envelope.as_ref())
        .and_then(|e| e.get("status_code"))
        .and_then(Value::as_u64);
    let message = (envelope.as_ref())
        .and_then(|e| e.get("status_message"))
        .and_then(Value::as_str)
        .map(|m| format!(": {}", cut(m)))
        .unwrap_or_default();
    let status = answer.status;
    match ((200..300).contains(&status), code) {
        (true, Some(1000..=1999)) => Ok(()),
        (true, Some(code)) => Err(format!("OCPI status {code}{message}")),
        (true, None) => Err(format!("answered {status} without an OCPI status_code")),
        (false, Some(code)) => Err(format!("answered {status}, OCPI status {code}{message}")),
        (false, None) if answer.body.trim().is_empty() => Err(format!("answered {status}")),
        (false, None) => Err(format!("answered {status}: {}", cut(answer.body.trim()))),
    }
}

/// At most 500 characters of a party's text, for the push log.
fn cut(text: &str) -> &str {
    match text.char_indices().nth(500) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// `wait` give or take 20%, so that pushes failing together do not retry together.
fn jittered(wait: Duration) -> Duration {
    let mut bytes = [0u8; 4];
    let random = match getrandom::fill(&mut bytes) {
        Ok(()) => u32::from_le_bytes(bytes) as f64 / u32::MAX as f64,
        Err(_) => 0.5,
    };
    wait.mul_f64(0.8 + 0.4 * random)
}
