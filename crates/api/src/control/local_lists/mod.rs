//! The list keeper: keeps each charger's local authorization list (SendLocalList) equal to the
//! tags that apply to it, on the sites that ask for it. Every API process runs one; the store's
//! claims make sure one of them sends a given call (docs/actions.md, "Local authorisation
//! lists").
//!
//! Each poll it looks only at the chargers whose list may have to change: those whose call
//! ended, those marked by the change logs since its cursors (tags, and the registry changes
//! that site, owner, access and the list's opt-in make), and those that connected since their
//! version was checked. Every `full_pass` it looks at every online charger of those sites
//! anyway (tags expire with time; a change made while no keeper ran).
//!
//! OCPP 2.0.1 stations get the same sync with their version's payloads (`v201`), the base
//! report in place of 1.6's configuration read, and the limits of their LocalAuthListCtrlr
//! (docs/ocpp201.md, "Local authorisation lists").

mod settle;
mod v201;
mod visit;

use crate::control::actions::{Dispatch, SWEEP_MARGIN};
use cms_store::local_lists::ListCursors;
use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How the list keeper paces itself.
#[derive(Debug, Clone, Copy)]
pub struct LocalListConfig {
    /// How often it looks for chargers whose list may have to change (a charger's answer
    /// wakes it at once).
    pub poll: Duration,
    /// How long after a charger connected it waits for the gateway's read of its configuration
    /// (which holds its list limits) before going on without it.
    pub configuration_grace: Duration,
    /// How long it leaves a charger alone after a failure that would fail again at once
    /// (Failed, no answer, a CALLERROR).
    pub retry_after: Duration,
    /// How often it looks at every online charger that keeps a list.
    pub full_pass: Duration,
}

impl Default for LocalListConfig {
    fn default() -> Self {
        LocalListConfig {
            poll: Duration::from_secs(1),
            configuration_grace: Duration::from_secs(10),
            retry_after: Duration::from_secs(30),
            full_pass: Duration::from_secs(300),
        }
    }
}

/// Keeps the lists until `stop`.
pub async fn keep_local_lists(
    dispatch: Arc<Dispatch>,
    config: LocalListConfig,
    stop: CancellationToken,
) {
    let mut keeper = Keeper {
        dispatch,
        config,
        wake: Arc::new(Notify::new()),
        waiters: JoinSet::new(),
        truncated: HashSet::new(),
        marked: BTreeSet::new(),
        cursors: None,
        last_full_pass: None,
    };
    while !stop.is_cancelled() {
        if let Err(e) = keeper.poll().await {
            tracing::error!(error = %e, "cannot keep the chargers' local lists");
        }
        while keeper.waiters.try_join_next().is_some() {}
        let wake = keeper.wake.clone();
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(keeper.config.poll) => {}
            _ = wake.notified() => {}
        }
    }
    keeper.waiters.abort_all();
}

struct Keeper {
    dispatch: Arc<Dispatch>,
    config: LocalListConfig,
    /// Notified when a call this process sent ended.
    wake: Arc<Notify>,
    /// Waiting for the ends of the calls this process sent.
    waiters: JoinSet<()>,
    /// Chargers whose list is cut to their LocalAuthListMaxLength, warned of once.
    truncated: HashSet<i64>,
    /// Chargers to look at.
    marked: BTreeSet<i64>,
    cursors: Option<ListCursors>,
    last_full_pass: Option<Instant>,
}

impl Keeper {
    async fn poll(&mut self) -> cms_store::Result<()> {
        let store = self.dispatch.store.clone();
        self.settle_ended().await?;
        let cursors = match self.cursors {
            Some(cursors) => cursors,
            None => store.local_list_cursors().await?,
        };
        let (changed, cursors) = store.local_list_changes(cursors).await?;
        self.cursors = Some(cursors);
        self.marked.extend(changed);
        self.marked.extend(store.local_lists_unchecked().await?);
        if self
            .last_full_pass
            .is_none_or(|last| last.elapsed() >= self.config.full_pass)
        {
            self.marked.extend(store.local_lists_online().await?);
            self.last_full_pass = Some(Instant::now());
        }
        for charger_id in std::mem::take(&mut self.marked) {
            match self.visit(charger_id).await {
                Ok(visit::Visit::Done) => {}
                Ok(visit::Visit::Later) => {
                    self.marked.insert(charger_id);
                }
                Err(e) => {
                    tracing::error!(error = %e, charger_id, "cannot update a charger's local list");
                    self.marked.insert(charger_id);
                }
            }
        }
        Ok(())
    }

    /// Records what the ended calls taught; their chargers are looked at next.
    async fn settle_ended(&mut self) -> cms_store::Result<()> {
        let store = &self.dispatch.store;
        let now = chrono::Utc::now();
        // A claim whose action never came to be (its claimant failed in between) is given up
        // once no action taken with it could still be going on.
        let times = self.dispatch.times;
        let stale = times.ttl + times.timeout + SWEEP_MARGIN;
        let stale_before = now - chrono::Duration::from_std(stale).unwrap_or_default();
        let retry_at =
            now + chrono::Duration::from_std(self.config.retry_after).unwrap_or_default();
        let retry_at = cms_store::format_record_time(retry_at);
        let at = cms_store::format_record_time(now);
        let stale_before = cms_store::format_record_time(stale_before);
        for ended in store.ended_local_list_calls(&stale_before).await? {
            let outcome = settle::outcome_of(&ended, &retry_at);
            if store
                .settle_local_list_call(ended.charger_id, &ended.action_uuid, &outcome, &at)
                .await?
            {
                tracing::debug!(
                    charger_id = ended.charger_id,
                    ?outcome,
                    "local list call ended"
                );
                self.marked.insert(ended.charger_id);
            }
        }
        Ok(())
    }
}
