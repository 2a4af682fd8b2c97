//! The chargers lists' rows, held by this replica. A row is checked against the store at most
//! every [`CHECKED_FOR`]: a page asks the store for the `updated_at` of its rows not checked
//! since, in one row of one column, and reads again only the rows that changed (every write to
//! a charger's row sets its `updated_at`). So a dashboard polling a list costs the store one
//! short query a tenth of a second at most, not one row handed over per charger from the
//! store's thread on every request, which is what a page cost (docs/performance.md "REST
//! reads"). A list is at most [`CHECKED_FOR`] older than the store, whichever replica or
//! process changed it; a change made through this replica is seen at once (every request
//! that changes something forgets the checks: crate::http's `access_in_force`).

use cms_store::access_log::VisibleCharger;
use cms_store::{ChargerRow, ConnectorRow, Store, StoreError};
use dashmap::DashMap;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long a row checked against the store is shown without checking it again.
pub const CHECKED_FOR: Duration = Duration::from_millis(100);
/// Rows held at most; past it they are all forgotten and read again.
const MAX_HELD: usize = 100_000;

struct Held {
    row: ChargerRow,
    checked_at: Instant,
    /// The [`ChargerRows::generation`] it was checked in.
    generation: u64,
}

/// A charger's connectors, held the same way: all of them (at most 100), their version.
struct HeldConnectors {
    connectors: Arc<Vec<ConnectorRow>>,
    version: String,
    checked_at: Instant,
    generation: u64,
}

#[derive(Default)]
pub struct ChargerRows {
    rows: DashMap<i64, Held>,
    /// By charger id.
    connectors: DashMap<i64, HeldConnectors>,
    /// Bumped by every change made through this replica: checks made before it do not count.
    generation: AtomicU64,
}

impl ChargerRows {
    /// Forgets every check: the next page reads the store again.
    pub fn forget_checks(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }

    /// The rows of `page`, in its order, with the permissions it gives; a charger deleted
    /// meanwhile is left out.
    pub async fn page(
        &self,
        store: &Store,
        page: &[VisibleCharger],
    ) -> Result<Vec<ChargerRow>, StoreError> {
        let generation = self.generation.load(Ordering::SeqCst);
        let unchecked: Vec<i64> = page
            .iter()
            .filter(|c| {
                self.rows.get(&c.id).is_none_or(|held| {
                    held.generation != generation || held.checked_at.elapsed() >= CHECKED_FOR
                })
            })
            .map(|c| c.id)
            .collect();
        if !unchecked.is_empty() {
            self.check(store, page, &unchecked, generation).await?;
        }
        Ok(page
            .iter()
            .filter_map(|c| {
                let mut row = self.rows.get(&c.id)?.row.clone();
                row.permissions = c.permissions;
                Some(row)
            })
            .collect())
    }

    /// Every connector of charger `charger_id`, by number: as held while checked within
    /// [`CHECKED_FOR`], else checked (their versions in one row) and read again if changed.
    pub async fn connectors(
        &self,
        store: &Store,
        charger_id: i64,
    ) -> Result<Arc<Vec<ConnectorRow>>, StoreError> {
        let generation = self.generation.load(Ordering::SeqCst);
        if let Some(held) = self.connectors.get(&charger_id)
            && held.generation == generation
            && held.checked_at.elapsed() < CHECKED_FOR
        {
            return Ok(held.connectors.clone());
        }
        let checked_at = Instant::now();
        let version = store.connector_versions(charger_id).await?;
        if let Some(mut held) = self.connectors.get_mut(&charger_id)
            && held.version == version
        {
            held.checked_at = checked_at;
            held.generation = generation;
            return Ok(held.connectors.clone());
        }
        let connectors = Arc::new(store.connectors(charger_id).await?);
        // Versioned by what was read, not by the check before it: a change in between is seen
        // at the next check.
        let version = versions_of(&connectors);
        if self.connectors.len() >= MAX_HELD {
            self.connectors.clear();
        }
        let held = HeldConnectors {
            connectors: connectors.clone(),
            version,
            checked_at,
            generation,
        };
        self.connectors.insert(charger_id, held);
        Ok(connectors)
    }

    /// Checks the rows `ids` against the store, reading those that changed; forgets those
    /// that are gone.
    async fn check(
        &self,
        store: &Store,
        page: &[VisibleCharger],
        ids: &[i64],
        generation: u64,
    ) -> Result<(), StoreError> {
        // Room first, so that what this check confirms is not cleared after it.
        if self.rows.len() + ids.len() > MAX_HELD {
            self.rows.clear();
        }
        let checked_at = Instant::now();
        let versions: HashMap<i64, String> =
            store.charger_versions(ids).await?.into_iter().collect();
        let mut stale = Vec::new();
        for id in ids {
            match versions.get(id) {
                None => {
                    self.rows.remove(id);
                }
                Some(at) => match self.rows.get_mut(id) {
                    Some(mut held) if held.row.updated_at == *at => {
                        held.checked_at = checked_at;
                        held.generation = generation;
                    }
                    _ => stale.extend(page.iter().find(|c| c.id == *id).copied()),
                },
            }
        }
        if stale.is_empty() {
            return Ok(());
        }
        for row in store.chargers_by_id(&stale).await? {
            let held = Held {
                row,
                checked_at,
                generation,
            };
            self.rows.insert(held.row.id, held);
        }
        Ok(())
    }
}

/// What [`Store::connector_versions`] gives for these connectors.
fn versions_of(connectors: &[ConnectorRow]) -> String {
    let versions: Vec<String> = connectors
        .iter()
        .map(|c| format!("{}={}", c.connector_id, c.updated_at))
        .collect();
    versions.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_store::{NewCharger, StateChange};

    #[tokio::test]
    async fn a_page_shows_the_rows_as_the_store_has_them_once_checked_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).await.unwrap();
        let operator = store.ensure_user("op@example.com").await.unwrap();
        for identity in ["CP-1", "CP-2"] {
            let new = NewCharger {
                identity: identity.into(),
                ..Default::default()
            };
            store.add_charger(&new).await.unwrap();
        }
        let (visible, _) = store.visible_chargers(operator.id).await.unwrap();
        let rows = ChargerRows::default();
        let first = rows.page(&store, &visible).await.unwrap();
        let identities: Vec<&str> = first.iter().map(|r| r.identity.as_str()).collect();
        assert_eq!(identities, ["CP-1", "CP-2"]);
        assert!(first.iter().all(|r| r.last_heartbeat_at.is_none()));

        // Written by another process (the materialiser of another replica, say).
        let at = "2030-01-01T00:00:00.000000Z";
        let heartbeat = StateChange::Heartbeat {
            identity: "CP-2".into(),
            at: at.into(),
        };
        store.apply(&[heartbeat]).await.unwrap();
        rows.forget_checks();
        let again = rows.page(&store, &visible).await.unwrap();
        assert_eq!(again[0].last_heartbeat_at, None);
        assert_eq!(again[1].last_heartbeat_at.as_deref(), Some(at));
        // And within the check's period, without another look at the store, the same.
        let held = rows.page(&store, &visible).await.unwrap();
        assert_eq!(held[1].last_heartbeat_at.as_deref(), Some(at));

        // Connectors alike: reported, then changed by another process.
        let status = |connector_id: i64, status: &str, at: &str| StateChange::Status {
            identity: "CP-1".into(),
            connector_id,
            status: status.into(),
            error: "NoError".into(),
            info: None,
            vendor_id: None,
            vendor_error_code: None,
            at: at.into(),
        };
        let charger = visible[0].id;
        assert!(rows.connectors(&store, charger).await.unwrap().is_empty());
        store
            .apply(&[status(1, "Available", "2030-01-01T00:00:01.000000Z")])
            .await
            .unwrap();
        rows.forget_checks();
        let one = rows.connectors(&store, charger).await.unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].status, "Available");
        store
            .apply(&[
                status(1, "Charging", "2030-01-01T00:00:02.000000Z"),
                status(2, "Available", "2030-01-01T00:00:02.000000Z"),
            ])
            .await
            .unwrap();
        rows.forget_checks();
        let two = rows.connectors(&store, charger).await.unwrap();
        let shown: Vec<(i64, &str)> = two
            .iter()
            .map(|c| (c.connector_id, c.status.as_str()))
            .collect();
        assert_eq!(shown, [(1, "Charging"), (2, "Available")]);
        assert_eq!(
            store.connector_versions(charger).await.unwrap(),
            versions_of(&two),
            "the store's version and the held one are written alike"
        );
    }
}
