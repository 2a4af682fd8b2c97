//! Real-time authorisation of an OCPI token (docs/ocpi.md, "Tokens"): `POST {tokens
//! url}/{uid}/authorize?type=...` to the token's eMSP with the charger's LocationReferences,
//! `Authorization: Token base64(token)`, waited for at most `--ocpi-authorize-timeout`. The call
//! runs in a task of its own (a session that ends meanwhile leaves it to finish, bounded by the
//! same time-out); the session awaits its answer, not the socket.

use cms_bus::{OcpiLocation, PartyLinkEntry};
use cms_ocpi::status;
use cms_ocpi::tokens::{AllowedType, AuthorizationInfo, LocationReferences, TokenType};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The default of `--ocpi-authorize-timeout`.
pub const AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(2);

/// The most of an eMSP's answer read: an AuthorizationInfo with its Token is a few hundred
/// bytes.
const ANSWER_LIMIT: usize = 64 * 1024;

/// What came of asking: the eMSP's word, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The eMSP answered: its AllowedType, or `None` when it does not know the token (2004).
    Answered(Option<AllowedType>),
    TimedOut,
    Failed(String),
}

impl Asked {
    /// The label of `cms_gateway_ocpi_authorizations_total{outcome}`.
    pub fn outcome(&self) -> &'static str {
        match self {
            Asked::Answered(_) => "answered",
            Asked::TimedOut => "timed_out",
            Asked::Failed(_) => "failed",
        }
    }
}

/// Every outcome, for the counter's series made at 0.
pub const OUTCOMES: [&str; 3] = ["answered", "timed_out", "failed"];

/// What is asked: about which token, of which party, where.
#[derive(Debug, Clone)]
pub struct Question {
    pub party: Arc<PartyLinkEntry>,
    pub uid: Box<str>,
    pub token_type: TokenType,
    pub location: OcpiLocation,
}

/// The client real-time authorisations go out on: made at the first one (most gateways never
/// ask), shared by every shard.
pub struct RealTime {
    timeout: Duration,
    client: OnceLock<Result<reqwest::Client, String>>,
}

impl RealTime {
    pub fn new(timeout: Duration) -> RealTime {
        RealTime {
            timeout,
            client: OnceLock::new(),
        }
    }

    /// Asks the eMSP, in a task of its own, and waits at most the time-out.
    pub async fn ask(&self, question: Question) -> Asked {
        let client = match self.client.get_or_init(client) {
            Ok(client) => client.clone(),
            Err(e) => return Asked::Failed(e.clone()),
        };
        let timeout = self.timeout;
        let call = tokio::spawn(async move {
            match tokio::time::timeout(timeout, post(&client, &question)).await {
                Ok(Ok(allowed)) => Asked::Answered(allowed),
                Ok(Err(e)) => Asked::Failed(e),
                Err(_) => Asked::TimedOut,
            }
        });
        call.await
            .unwrap_or_else(|e| Asked::Failed(format!("the call's task failed: {e}")))
    }
}

/// No redirects followed, no proxy from the environment: the party's URL is the one it
/// registered.
fn client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|e| format!("no HTTP client: {e}"))
}

/// The call itself: the eMSP's AllowedType, `None` for a token it does not know (2004, or a
/// 404 with 2004), or why it failed.
async fn post(
    client: &reqwest::Client,
    question: &Question,
) -> Result<Option<AllowedType>, String> {
    let mut url = reqwest::Url::parse(&question.party.tokens_url)
        .map_err(|e| format!("the party's tokens URL: {e}"))?;
    url.path_segments_mut()
        .map_err(|_| "the party's tokens URL cannot take a path".to_string())?
        .pop_if_empty()
        .extend([&*question.uid, "authorize"]);
    url.query_pairs_mut()
        .append_pair("type", question.token_type.as_str());
    let body = LocationReferences {
        location_id: question.location.location_id.clone(),
        evse_uids: vec![question.location.evse_uid.clone()],
    };
    let body = serde_json::to_vec(&body).map_err(|e| e.to_string())?;
    let request_id = uuid::Uuid::new_v4().to_string();
    let mut response = client
        .post(url)
        .header(
            "Authorization",
            cms_ocpi::token_header::header_value(&question.party.token),
        )
        .header("Content-Type", "application/json")
        .header("X-Request-ID", &request_id)
        .header("X-Correlation-ID", &request_id)
        .body(body)
        .send()
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    let http = response.status();
    let mut read = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| e.to_string())? {
        if read.len() + chunk.len() > ANSWER_LIMIT {
            return Err(format!("an answer over {ANSWER_LIMIT} bytes"));
        }
        read.extend_from_slice(&chunk);
    }
    // Read leniently: only the status code and the AllowedType matter.
    let envelope: serde_json::Value = serde_json::from_slice(&read)
        .map_err(|e| format!("HTTP {http}, not an OCPI answer: {e}"))?;
    let code = envelope["status_code"].as_u64();
    if code == Some(u64::from(status::UNKNOWN_TOKEN)) {
        return Ok(None);
    }
    let info = serde_json::from_value::<AuthorizationInfo>(envelope["data"].clone());
    match (info, code) {
        (Ok(info), Some(1000..2000)) if http.is_success() => Ok(Some(info.allowed)),
        _ => Err(format!("HTTP {http}, status_code {code:?}")),
    }
}
