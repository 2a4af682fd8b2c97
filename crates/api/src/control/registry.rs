//! Publishes what gateways hold in memory to compacted topics: the charger registry (who may
//! connect, and which id tags apply to each charger) and the teams' id tags. So a charger or a
//! tag registered anywhere (the API, `cms charger add`, an import) takes effect on every gateway
//! within a few seconds, with no gateway ever asking the database. The id-tags topic carries
//! the providers' OCPI party links too (docs/ocpi.md, "Tokens"), their tokens sealed.

use cms_bus::{
    IdTagEntry, IdTagStatus, OcpiLocation, PartyLinkEntry, ProxySetup, Publisher, Record,
    Registration, RegistryState, SecretsKey, SiteAuthorization, TokenTerms, Topics, id_tag_record,
    party_link_record, registry_record,
};
use cms_store::{IdTagChange, RegistryChange, Store, StoreError};
use futures_util::future::join_all;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often the store's change logs are read: one indexed query each, and a blocked tag must
/// reach every gateway within a couple of seconds.
const POLL: Duration = Duration::from_millis(250);
const BATCH: i64 = 5_000;

pub struct RegistryPublisher {
    pub store: Store,
    pub bus: Arc<dyn Publisher>,
    pub topics: Topics,
    /// Seals the tokens of the OCPI party links (`--secrets-key`); without it they are left
    /// out, and gateways cannot ask parties in real time.
    pub secrets_key: Option<SecretsKey>,
}

/// Where each change log has been published to.
#[derive(Default)]
struct Cursors {
    registry: i64,
    id_tags: i64,
}

impl RegistryPublisher {
    /// Runs until `stop`. Starts from the beginning of the change logs at every start: the
    /// topics are compacted, so republishing costs a burst, never a wrong state.
    pub async fn run(self, stop: CancellationToken) {
        let published = metrics::counter!("cms_registry_published_total");
        let mut cursors = Cursors::default();
        while !stop.is_cancelled() {
            match self.publish_some(&mut cursors).await {
                Ok(0) => {}
                Ok(n) => {
                    published.increment(n as u64);
                    continue;
                }
                // Retry the same changes: publishing them twice is harmless.
                Err(e) => tracing::error!(error = %e, "registry publish failed; retrying"),
            }
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(POLL) => {}
            }
        }
    }

    /// Publishes the next batch of each log; how many records went out.
    async fn publish_some(&self, cursors: &mut Cursors) -> Result<usize, String> {
        let store_error = |e: StoreError| e.to_string();
        let chargers = self.store.registry_changes_since(cursors.registry, BATCH);
        let chargers = chargers.await.map_err(store_error)?;
        let records = chargers
            .iter()
            .map(|change| registry_record(&self.topics, &change.identity, &registry_state(change)));
        self.publish_all(records.collect()).await?;
        cursors.registry = chargers.last().map_or(cursors.registry, |c| c.seq);

        let tags = self.store.id_tag_changes_since(cursors.id_tags, BATCH);
        let tags = tags.await.map_err(store_error)?;
        let records = tags.iter().map(|change| {
            if change.is_party() {
                let link = party_link(change);
                if link.is_some() && self.secrets_key.is_none() {
                    tracing::warn!(
                        team_id = change.team_id,
                        "an OCPI party's token is not \
                        published without --secrets-key: gateways cannot ask it in real time"
                    );
                }
                let secrets = self.secrets_key.as_ref();
                return party_link_record(&self.topics, change.team_id, link.as_ref(), secrets);
            }
            let entry = id_tag_entry(change);
            id_tag_record(
                &self.topics,
                change.team_id,
                &change.id_tag_key,
                entry.as_ref(),
            )
        });
        self.publish_all(records.collect()).await?;
        cursors.id_tags = tags.last().map_or(cursors.id_tags, |c| c.seq);
        Ok(chargers.len() + tags.len())
    }

    async fn publish_all(&self, records: Vec<Record>) -> Result<(), String> {
        let results = join_all(records.into_iter().map(|r| self.bus.publish(r))).await;
        match results.into_iter().find_map(Result::err) {
            Some(e) => Err(e.to_string()),
            None => Ok(()),
        }
    }
}

/// A change of the store's registry log as the state gateways hold.
pub fn registry_state(change: &RegistryChange) -> RegistryState {
    match &change.registration {
        Some(entry) => RegistryState::Registered(Registration {
            password_hash: entry.password_hash.clone(),
            security_profile: u8::try_from(entry.security_profile).unwrap_or(u8::MAX),
            authorization: match &entry.id_tag_teams {
                Some(teams) => SiteAuthorization::IdTags {
                    teams: teams.as_slice().into(),
                },
                None => SiteAuthorization::Open,
            },
            proxy: ProxySetup::new(entry.vendor_role.as_deref(), &entry.proxy_servers),
            price_text: entry.shown_tariff.as_deref().and_then(price_text),
            ocpi_location: entry.location.as_ref().map(|l| {
                Box::new(OcpiLocation {
                    location_id: l.site_uuid.clone(),
                    evse_uid: l.charger_uuid.clone(),
                })
            }),
        }),
        None => RegistryState::Unregistered,
    }
}

/// The price text of a tariff kept as JSON (docs/tariffs.md "Prices on the charger"); one that
/// cannot be read (never expected: the API checked it) shows none.
fn price_text(tariff: &str) -> Option<String> {
    match serde_json::from_str::<cms_tariffs::Tariff>(tariff) {
        Ok(tariff) => Some(cms_tariffs::price_text(&tariff)),
        Err(e) => {
            tracing::warn!(error = %e, "a site's tariff shows no price text");
            None
        }
    }
}

/// A change of the store's id-tag log as the tag gateways hold; `None`: deleted. A tag with a
/// status or an expiry the store should never hold is held as Invalid, so that it lets nobody
/// in.
pub fn id_tag_entry(change: &IdTagChange) -> Option<IdTagEntry> {
    let tag = change.tag.as_ref()?;
    let expiry_date = match tag.expiry_date.as_deref() {
        Some(e) => chrono::DateTime::parse_from_rfc3339(e)
            .ok()
            .map(|e| e.timestamp()),
        None => None,
    };
    // An expiry the store holds but cannot be read fails closed, like an unknown status.
    let unreadable = tag.expiry_date.is_some() && expiry_date.is_none();
    let status = IdTagStatus::parse(&tag.status).filter(|_| !unreadable);
    Some(IdTagEntry {
        team_id: change.team_id,
        id_tag: tag.id_tag.clone(),
        status: status.unwrap_or(IdTagStatus::Invalid),
        expiry_date,
        parent_id_tag: tag.parent_id_tag.clone(),
        ocpi: (tag.ocpi_type.clone()).zip(tag.ocpi_whitelist.clone()).map(
            |(token_type, whitelist)| TokenTerms {
                token_type,
                whitelist,
            },
        ),
    })
}

/// A change of a team's OCPI party (`IdTagChange::is_party`) as the link gateways hold; `None`:
/// none to ask.
pub fn party_link(change: &IdTagChange) -> Option<PartyLinkEntry> {
    let link = change.party.as_ref()?;
    Some(PartyLinkEntry {
        tokens_url: link.tokens_url.clone(),
        token: link.token.clone(),
    })
}
