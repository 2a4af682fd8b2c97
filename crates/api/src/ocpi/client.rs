//! cms calling a party during the credentials handshake: its versions, its 2.2.1 details, its
//! credentials endpoint. Through the pushes' client (cms_roaming::client), so a party's URLs
//! get the same guards (https, no redirects, no private addresses unless
//! `--ocpi-allow-private`, a time-out).

use axum::http::Method;
use cms_ocpi::credentials::Credentials;
use cms_ocpi::envelope::Envelope;
use cms_ocpi::status;
use cms_ocpi::token_header::header_value;
use cms_ocpi::versions::{Endpoint, Version, VersionDetails};
use cms_roaming::client::Client;
use serde::de::DeserializeOwned;
use std::time::Duration;

/// Why a handshake with a party failed: the OCPI status that says so (3001 unable to use the
/// client's API, 3002 unsupported version) and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandshakeError {
    pub code: u32,
    pub message: String,
}

impl HandshakeError {
    fn unusable(message: impl Into<String>) -> Self {
        HandshakeError {
            code: status::UNABLE_TO_USE_CLIENT_API,
            message: message.into(),
        }
    }
}

/// A party's API as cms reaches it.
pub struct PartyClient {
    http: Client,
}

/// What a party's versions URL leads to: its 2.2.1 details' URL and endpoints.
pub struct PartyVersion {
    pub endpoints: Vec<Endpoint>,
}

impl PartyVersion {
    /// The URL of its `identifier` module (any role: credentials is listed in either).
    pub fn module(&self, identifier: &str) -> Option<&str> {
        (self.endpoints.iter())
            .find(|e| e.identifier == identifier)
            .map(|e| e.url.as_str())
    }
}

impl PartyClient {
    pub fn new(allow_private: bool) -> PartyClient {
        PartyClient {
            http: Client::new(allow_private, Duration::from_secs(10)),
        }
    }

    /// The party's 2.2.1 endpoints, found from its versions URL with `token`.
    pub async fn version_221(
        &self,
        versions_url: &str,
        token: &str,
    ) -> Result<PartyVersion, HandshakeError> {
        let versions: Vec<Version> = self.data(Method::GET, versions_url, token, None).await?;
        let Some(version) = versions.iter().find(|v| v.version == cms_ocpi::VERSION) else {
            let spoken: Vec<&str> = versions.iter().map(|v| v.version.as_str()).collect();
            return Err(HandshakeError {
                code: status::UNSUPPORTED_VERSION,
                message: format!("The party speaks {spoken:?}, not 2.2.1."),
            });
        };
        let details: VersionDetails = self.data(Method::GET, &version.url, token, None).await?;
        Ok(PartyVersion {
            endpoints: details.endpoints,
        })
    }

    /// Sends cms's credentials to the party's credentials endpoint (`POST` to register, `PUT`
    /// to rotate) with `token`; the party's credentials in answer.
    pub async fn send_credentials(
        &self,
        method: Method,
        url: &str,
        token: &str,
        ours: &Credentials,
    ) -> Result<Credentials, HandshakeError> {
        let body = serde_json::to_string(ours).expect("credentials serialise");
        self.data(method, url, token, Some(body)).await
    }

    /// Tells the party cms unregisters (`DELETE` its credentials endpoint); whether it agreed.
    pub async fn delete_credentials(&self, url: &str, token: &str) -> Result<(), HandshakeError> {
        let _: Option<serde_json::Value> = self.data(Method::DELETE, url, token, None).await?;
        Ok(())
    }

    /// The `data` of a party's answer, when the HTTP status is 2xx and the OCPI status 1xxx.
    async fn data<T: DeserializeOwned>(
        &self,
        method: Method,
        url: &str,
        token: &str,
        body: Option<String>,
    ) -> Result<T, HandshakeError> {
        let what = format!("{method} {url}");
        let headers = [
            ("authorization", header_value(token)),
            ("x-request-id", uuid::Uuid::new_v4().to_string()),
            ("x-correlation-id", uuid::Uuid::new_v4().to_string()),
        ];
        let answer = (self.http)
            .send(method.as_str(), url, &headers, body)
            .await
            .map_err(|e| HandshakeError::unusable(format!("{what}: {e}")))?;
        if !(200..300).contains(&answer.status) {
            return Err(HandshakeError::unusable(format!(
                "{what} answered HTTP {}",
                answer.status
            )));
        }
        let envelope: Envelope<T> = serde_json::from_str(&answer.body).map_err(|e| {
            HandshakeError::unusable(format!("{what} answered no OCPI response: {e}"))
        })?;
        if !envelope.is_success() {
            return Err(HandshakeError::unusable(format!(
                "{what} answered OCPI status {} ({})",
                envelope.status_code,
                envelope.status_message.unwrap_or_default()
            )));
        }
        match envelope.data {
            Some(data) => Ok(data),
            // An answer without data where data is optional (DELETE).
            None => serde_json::from_value(serde_json::Value::Null)
                .map_err(|_| HandshakeError::unusable(format!("{what} answered without data"))),
        }
    }
}
