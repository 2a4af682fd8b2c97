//! Who may charge: Authorize, StartTransaction and StopTransaction answered from memory. A
//! charger's registration says whether its site is open or which teams' id tags apply
//! ([`SiteAuthorization`]); the tags themselves are held here, fed from the id-tags topic
//! (`cms gateway`) or the store's change log (`cms up`), so no answer waits for a database.
//! An Authorize with an OCPI token whose whitelist says so waits for its eMSP instead
//! ([`Authority::authorize_or_ask`], docs/ocpi.md "Tokens").

mod id_tags;
mod open_transactions;
mod real_time;
mod short_tag;

pub use id_tags::IdTagDirectory;
pub use real_time::AUTHORIZE_TIMEOUT;
pub(crate) use real_time::OUTCOMES as REAL_TIME_OUTCOMES;

use crate::registry::RegistryDirectory;
use chrono::{DateTime, Utc};
use cms_bus::{IdTagStatus, SiteAuthorization};
use cms_ocpi::tokens::{AllowedType, WhitelistType};
use cms_ocpp::v16::answer::IdTagInfo;
use id_tags::TokenToAsk;
use open_transactions::OpenTransactions;
use real_time::{Asked, Question, RealTime};
use short_tag::ShortTag;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Everything the frame path needs to answer for an id tag.
pub struct Authority {
    registry: Arc<RegistryDirectory>,
    id_tags: Arc<IdTagDirectory>,
    /// Transactions this gateway saw start and not yet stop, for ConcurrentTx.
    open: OpenTransactions,
    /// Asks eMSPs about their tokens.
    real_time: RealTime,
    /// When the last real-time failure was logged (Unix seconds): one a minute at most.
    failure_logged: AtomicI64,
}

/// How an Authorize is answered: now, or once the token's eMSP was asked.
pub enum Authorized {
    Now(Verdict),
    Ask(Box<Ask>),
}

/// An Authorize waiting for the eMSP of its token.
pub struct Ask {
    question: Question,
    /// What memory says (ConcurrentTx included): kept when the eMSP allows the token.
    memory: Verdict,
    /// The answer when the eMSP cannot be asked in time: memory's for ALLOWED_OFFLINE,
    /// Invalid for NEVER.
    fallback: Verdict,
}

impl Ask {
    /// The answer without the eMSP (a relayed charger's own answer when its leader is late).
    pub fn fallback(&self) -> &Verdict {
        &self.fallback
    }
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
            real_time: RealTime::new(AUTHORIZE_TIMEOUT),
            failure_logged: AtomicI64::new(i64::MIN),
        }
    }

    /// How long an eMSP is waited for (`--ocpi-authorize-timeout`).
    pub fn with_authorize_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.real_time = RealTime::new(timeout);
        self
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

    /// Authorize.req as [`Authority::authorize`], unless the verdict comes from an OCPI token
    /// whose whitelist asks its eMSP (ALLOWED_OFFLINE, NEVER): then the eMSP is to be asked
    /// ([`Authority::ask`]). A token whose party or location the gateway does not know is
    /// answered at once as if the eMSP could not be reached.
    pub fn authorize_or_ask(&self, identity: &str, id_tag: &str, now: DateTime<Utc>) -> Authorized {
        let (memory, token) = self.decide(identity, id_tag, now, true);
        let Some(TokenToAsk { token, party }) = token else {
            return Authorized::Now(memory);
        };
        let fallback = match token.whitelist {
            WhitelistType::Never => Verdict::INVALID,
            _ => memory.clone(),
        };
        let location = self.registry.ocpi_location(identity);
        let (Some(party), Some(location)) = (party, location) else {
            self.asked(&Asked::Failed("no party link to ask".into()));
            return Authorized::Now(fallback);
        };
        let question = Question {
            party,
            uid: token.uid,
            token_type: token.token_type,
            location,
        };
        Authorized::Ask(Box::new(Ask {
            question,
            memory,
            fallback,
        }))
    }

    /// Asks the eMSP (at most `--ocpi-authorize-timeout`) and answers with its word: ALLOWED
    /// Accepted (ConcurrentTx when memory said so), BLOCKED Blocked, EXPIRED Expired,
    /// NO_CREDIT, NOT_ALLOWED and an unknown token Invalid; without it, the fallback.
    pub async fn ask(&self, ask: Ask) -> Verdict {
        let Ask {
            question,
            memory,
            fallback,
        } = ask;
        let asked = self.real_time.ask(question).await;
        self.asked(&asked);
        let status = match asked {
            Asked::Answered(Some(AllowedType::Allowed)) if memory.status == "ConcurrentTx" => {
                "ConcurrentTx"
            }
            Asked::Answered(Some(AllowedType::Allowed)) => "Accepted",
            Asked::Answered(Some(AllowedType::Blocked)) => "Blocked",
            Asked::Answered(Some(AllowedType::Expired)) => "Expired",
            Asked::Answered(_) => "Invalid",
            Asked::TimedOut | Asked::Failed(_) => return fallback,
        };
        Verdict {
            status,
            expiry_date: memory.expiry_date.filter(|_| status == "Accepted"),
            parent_id_tag: memory.parent_id_tag,
        }
    }

    /// Counts what came of asking; logs a failure, once a minute at most.
    fn asked(&self, asked: &Asked) {
        let outcome = asked.outcome();
        metrics::counter!("cms_gateway_ocpi_authorizations_total", "outcome" => outcome)
            .increment(1);
        let why = match asked {
            Asked::Answered(_) => return,
            Asked::TimedOut => "no answer in time",
            Asked::Failed(why) => why.as_str(),
        };
        let now = Utc::now().timestamp();
        let last = self.failure_logged.load(Ordering::Relaxed);
        if now.saturating_sub(last) >= 60
            && (self.failure_logged)
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            tracing::warn!(
                why,
                "a real-time authorisation failed: answered without the eMSP \
                (counted in cms_gateway_ocpi_authorizations_total)"
            );
        }
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
        self.decide(identity, id_tag, now, concurrency).0
    }

    /// [`Authority::verdict`], and the OCPI token to ask about when its whitelist says so.
    fn decide(
        &self,
        identity: &str,
        id_tag: &str,
        now: DateTime<Utc>,
        concurrency: bool,
    ) -> (Verdict, Option<TokenToAsk>) {
        let teams = match self.registry.authorization(identity) {
            Some(SiteAuthorization::Open) => return (Verdict::ACCEPTED, None),
            Some(SiteAuthorization::IdTags { teams }) => teams,
            // No longer registered (removed while connected): nobody may charge.
            None => return (Verdict::INVALID, None),
        };
        let (verdict, token) = self.id_tags.decide(&teams, id_tag, now);
        let elsewhere =
            || ShortTag::upper(id_tag).is_some_and(|t| self.open.elsewhere(t, identity));
        if concurrency && verdict.is_accepted() && elsewhere() {
            let concurrent = Verdict {
                status: "ConcurrentTx",
                ..verdict
            };
            return (concurrent, token);
        }
        (verdict, token)
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
        ocpi_location: None,
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
#[cfg(test)]
mod tests_real_time;
