//! What a session hands a frame's handling, for the tests of both versions' handlers.

use super::{CallContext, Handled, handle_text};
use crate::authorization::Authority;
use crate::transactions::TransactionIds;
use bytes::Bytes;
use chrono::Utc;
use cms_bus::Topics;
use cms_ocpp::OcppVersion;

pub(crate) struct Fixture {
    pub(crate) topics: Topics,
    ids: TransactionIds,
    authority: Authority,
    pub(crate) key: Bytes,
    session: Bytes,
    node: Bytes,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        Fixture {
            topics: Topics::with_prefix("t"),
            ids: TransactionIds::default(),
            authority: crate::authorization::open_authority("CP-1"),
            key: Bytes::from_static(b"CP-1"),
            session: Bytes::from_static(b"s-1"),
            node: Bytes::from_static(b"gw-1"),
        }
    }

    /// A fixture whose charger's site shows prices: the registry holds its price text.
    pub(crate) fn with_price_text(text: &str) -> Self {
        let registry = std::sync::Arc::new(crate::registry::RegistryDirectory::default());
        let registration = cms_bus::Registration {
            password_hash: None,
            security_profile: 0,
            authorization: cms_bus::SiteAuthorization::Open,
            proxy: None,
            price_text: Some(text.to_string()),
            ocpi_location: None,
        };
        registry.apply_state("CP-1", cms_bus::RegistryState::Registered(registration));
        Fixture {
            authority: Authority::new(registry, Default::default()),
            ..Fixture::new()
        }
    }

    /// What a session of `version` hands a frame's handling.
    pub(crate) fn context(&self, version: OcppVersion) -> CallContext<'_> {
        CallContext {
            identity: "CP-1",
            identity_key: &self.key,
            session: &self.session,
            node: &self.node,
            version,
            topics: &self.topics,
            transaction_ids: &self.ids,
            authority: &self.authority,
            heartbeat_interval_secs: 120,
        }
    }

    /// A frame of a 1.6 session.
    pub(crate) fn handle(&self, text: &str) -> Handled {
        let ctx = self.context(OcppVersion::V16);
        let frame = Bytes::copy_from_slice(text.as_bytes());
        handle_text(&ctx, text, &frame, Utc::now())
    }
}
