//! Who may charge: Authorize, StartTransaction and StopTransaction answered from memory. A
//! charger's registration says whether its site is open or which teams' id tags apply
//! ([`SiteAuthorization`]); the tags themselves are held here, fed from the id-tags topic
//! (`cms gateway`) or the store's change log (`cms up`), so no answer waits for a database.

mod id_tags;
mod open_transactions;
mod short_tag;

pub use id_tags::IdTagDirectory;

use crate::registry::RegistryDirectory;
use chrono::{DateTime, Utc};
use cms_bus::{IdTagStatus, SiteAuthorization};
use cms_ocpp::v16::answer::IdTagInfo;
use open_transactions::OpenTransactions;
use short_tag::ShortTag;
use std::sync::Arc;

/// Everything the frame path needs to answer for an id tag.
pub struct Authority {
    registry: Arc<RegistryDirectory>,
    id_tags: Arc<IdTagDirectory>,
    /// Transactions this gateway saw start and not yet stop, for ConcurrentTx.
    open: OpenTransactions,
}

/// The answer for a tag, with what an idTagInfo carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub status: &'static str,
    pub expiry_date: Option<DateTime<Utc>>,
    pub parent_id_tag: Option<String>,
}

impl Verdict {
    const ACCEPTED: Verdict = Verdict {
        status: "Accepted",
        expiry_date: None,
        parent_id_tag: None,
    };
    const INVALID: Verdict = Verdict {
        status: "Invalid",
        expiry_date: None,
        parent_id_tag: None,
    };

    pub fn id_tag_info(&self) -> IdTagInfo<'_> {
        IdTagInfo {
            status: self.status,
            expiry_date: self.expiry_date,
            parent_id_tag: self.parent_id_tag.as_deref(),
        }
    }

    pub fn is_accepted(&self) -> bool {
        self.status == "Accepted"
    }
}

impl Authority {
    pub fn new(registry: Arc<RegistryDirectory>, id_tags: Arc<IdTagDirectory>) -> Self {
        Authority {
            registry,
            id_tags,
            open: OpenTransactions::default(),
        }
    }

    /// The driver's price text at `identity` when its site shows prices there (a 2.0.1
    /// station's `personalMessage`).
    pub fn price_text(&self, identity: &str) -> Option<String> {
        self.registry.price_text(identity)
    }

    /// Authorize.req: may `id_tag` charge at this charger now? `ConcurrentTx` when the tag is
    /// charging at another charger of this gateway.
    pub fn authorize(&self, identity: &str, id_tag: &str, now: DateTime<Utc>) -> Verdict {
        self.verdict(identity, id_tag, now, true)
    }

    /// The verdict on a tag that ends its own session (a 2.0.1 TransactionEvent Ended): as
    /// Authorize, but never ConcurrentTx.
    pub fn authorize_stop(&self, identity: &str, id_tag: &str, now: DateTime<Utc>) -> Verdict {
        self.verdict(identity, id_tag, now, false)
    }

    /// StartTransaction.req: the verdict on its tag, as Authorize, and an accepted transaction
    /// noted as open on this charger. A refused one is not: it ends (StopTransactionOnInvalidId)
    /// and must not make the tag's real session look concurrent.
    pub fn start(
        &self,
        identity: &str,
        connector_id: u32,
        id_tag: &str,
        transaction_id: i32,
        now: DateTime<Utc>,
    ) -> Verdict {
        let verdict = self.verdict(identity, id_tag, now, true);
        if let Some(tag) = ShortTag::upper(id_tag).filter(|_| verdict.is_accepted()) {
            self.open
                .started(tag, identity, connector_id, transaction_id);
        }
        verdict
    }

    /// A StartTransaction the charger's leader proxy server answered: the transaction is open
    /// under the leader's `transactionId` if the leader accepted the tag, and not at all if not.
    pub fn leader_started(&self, identity: &str, own_id: i32, leaders_id: i32, accepted: bool) {
        if accepted {
            self.open.renumber(identity, own_id, leaders_id);
        } else {
            self.open.stopped(identity, own_id);
        }
    }

    /// StopTransaction.req: the transaction is no longer open; the verdict on the tag that
    /// stopped it, when it named one (never ConcurrentTx: the tag is ending its own session).
    pub fn stop(
        &self,
        identity: &str,
        transaction_id: i32,
        id_tag: Option<&str>,
        now: DateTime<Utc>,
    ) -> Option<Verdict> {
        self.open.stopped(identity, transaction_id);
        id_tag.map(|tag| self.verdict(identity, tag, now, false))
    }

    /// The verdict on `id_tag` at this charger: Accepted on an open site; else from the tags of
    /// the teams that apply, an Accepted tag charging at another charger becoming ConcurrentTx
    /// when `concurrency` counts.
    fn verdict(
        &self,
        identity: &str,
        id_tag: &str,
        now: DateTime<Utc>,
        concurrency: bool,
    ) -> Verdict {
        let teams = match self.registry.authorization(identity) {
            Some(SiteAuthorization::Open) => return Verdict::ACCEPTED,
            Some(SiteAuthorization::IdTags { teams }) => teams,
            // No longer registered (removed while connected): nobody may charge.
            None => return Verdict::INVALID,
        };
        let verdict = self.id_tags.verdict(&teams, id_tag, now);
        let elsewhere =
            || ShortTag::upper(id_tag).is_some_and(|t| self.open.elsewhere(t, identity));
        if concurrency && verdict.is_accepted() && elsewhere() {
            return Verdict {
                status: "ConcurrentTx",
                ..verdict
            };
        }
        verdict
    }
}

/// An authority for one charger of an open site: what the frame path's tests and benchmark
/// need.
pub fn open_authority(identity: &str) -> Authority {
    let registry = Arc::new(RegistryDirectory::default());
    let registration = cms_bus::Registration {
        password_hash: None,
        security_profile: 0,
        authorization: SiteAuthorization::Open,
        proxy: None,
        price_text: None,
    };
    registry.apply_state(identity, cms_bus::RegistryState::Registered(registration));
    Authority::new(registry, Arc::default())
}

/// The status a stored tag is answered with at `now`.
fn effective_status(status: IdTagStatus, expiry: Option<i64>, now: DateTime<Utc>) -> &'static str {
    match status {
        IdTagStatus::Accepted if expiry.is_some_and(|e| e <= now.timestamp()) => "Expired",
        status => status.as_str(),
    }
}

#[cfg(test)]
mod tests;
