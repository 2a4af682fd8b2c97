//! The bus between the gateway and the API: records keyed by charger, published with an
//! acknowledgement, consumed by groups. Shaped after Kafka (topics, keys, headers, partitions,
//! offsets, commits) so that the in-process bus and the Kafka bus are interchangeable.
#![forbid(unsafe_code)]

mod action_name;
mod actions;
mod caught_up;
mod charger_frames;
mod charger_messages;
mod connections;
pub mod contract;
mod id_tags;
mod in_process;
mod ocpi_parties;
mod proxy;
pub mod proxy_url;
mod publishing;
mod record;
mod registry;
mod sealing;
mod topics;

pub use action_name::ActionName;
pub use actions::{
    ActionError, ActionReport, ActionRequest, ActionStatus, RequestedBy, command_of,
    command_record, report_of, report_record, version_number, version_of_number,
};
pub use caught_up::CaughtUp;
pub use charger_frames::{
    FRAMES, FRAMES_REQUEST, FramesAnswer, FramesRequest, MAX_ANSWER_BYTES, SentFrame,
    frames_answer_record, frames_request_record,
};
pub use charger_messages::{
    ChargerMessage, message_headers, push_authorize_refused, push_reading_headers,
    push_start_headers, push_transaction_event_headers,
};
pub use connections::ConnectionEvent;
pub use contract::{CONTRACT_VERSION, header};
pub use id_tags::{IdTagEntry, IdTagStatus, TokenTerms, id_tag_entry, id_tag_record};
pub use in_process::{InProcessBus, InProcessConfig};
pub use ocpi_parties::{PartyLinkEntry, party_link_entry, party_link_record};
pub use proxy::{ProxySetup, Upstream, VendorRole};
pub use proxy_url::ProxyUrl;
pub use publishing::Publishing;
pub use record::{Delivered, Header, Headers, Message, Record};
pub use registry::{
    OcpiLocation, Registration, RegistryState, SiteAuthorization, registry_record, registry_state,
};
pub use sealing::SecretsKey;
pub use topics::Topics;

use std::future::Future;
use std::pin::Pin;

/// A boxed future, so that the bus can be a trait object (`Arc<dyn Bus>`).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why the bus could not take or give a record. Every variant is an upstream (bus-side) failure.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum BusError {
    #[error("the bus is closed")]
    Closed,
    #[error("unknown topic {0}")]
    UnknownTopic(String),
    #[error("bus failure: {0}")]
    Failed(String),
}

/// Publishes records. `publish` resolves once the bus has taken responsibility for the record
/// (for Kafka: the broker acknowledged it), so a caller may only then tell a charger "taken".
/// A caller that awaits each publish in turn keeps its records in order. A record may be taken
/// before its `Publishing` is awaited (Kafka enqueues it at once; the in-process bus when its
/// queues have room), so dropping a `Publishing` does not withdraw the record; awaiting it is
/// how a caller learns that it was taken.
pub trait Publisher: Send + Sync + 'static {
    fn publish(&self, record: Record) -> Publishing;
}

/// Reads records of the topics it subscribed to, in order per partition.
pub trait Subscriber: Send + 'static {
    /// Waits for at least one message and appends up to `max` to `out`. Returns `Ok(0)` once the
    /// bus is closed and every record published before has been handed out (drained).
    fn next_batch<'a>(
        &'a mut self,
        out: &'a mut Vec<Message>,
        max: usize,
    ) -> BoxFuture<'a, Result<usize, BusError>>;

    /// Marks everything up to and including `message` as processed by this group.
    fn commit(&mut self, message: &Message) -> Result<(), BusError>;

    /// Tells when this subscriber has caught up: read, and seen committed, what its share of
    /// the topics held when it began. By default at once, which is right for a bus that starts
    /// empty (the in-process bus) and for a follower that starts at the end.
    fn caught_up(&self) -> CaughtUp {
        CaughtUp::already()
    }
}

/// A bus: publish, subscribe as a consumer group, follow, and close (stop taking records; let
/// subscribers drain what was taken).
pub trait Bus: Publisher {
    fn subscribe(&self, group: &str, topics: &[&str]) -> Result<Box<dyn Subscriber>, BusError>;
    /// Reads every partition of `topics` from now on, outside any group and committing nothing:
    /// every process that follows a topic sees every record published after it began to.
    /// What every gateway needs of the commands, and every API replica of the reports.
    fn follow<'a>(
        &'a self,
        topics: &'a [&'a str],
    ) -> BoxFuture<'a, Result<Box<dyn Subscriber>, BusError>>;
    fn close(&self);
}
