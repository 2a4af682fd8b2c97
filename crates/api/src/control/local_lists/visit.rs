//! One look at one charger: check its list version after it connected, or send the next part
//! of the way from what it holds to what it should, or nothing.

use super::{Keeper, v201};
use crate::control::actions::Target;
use cms_bus::{ActionName, RequestedBy};
use cms_ocpp::OcppVersion;
use cms_store::local_lists::{
    ListCall, ListCallKind, ListChange, ListCharger, ListEntry, ListUpdate, fit, next_update,
};
use serde_json::{Value, json};

pub enum Visit {
    /// Nothing more to do for now: in step, offline, not keeping a list, or a call in flight
    /// (its end marks the charger again).
    Done,
    /// To be looked at again next poll (waiting for its configuration, or a retry time).
    Later,
}

impl Keeper {
    pub(super) async fn visit(&mut self, charger_id: i64) -> cms_store::Result<Visit> {
        let store = self.dispatch.store.clone();
        let Some(charger) = store.local_list_charger(charger_id).await? else {
            return Ok(Visit::Done);
        };
        let Some(session) = charger.session.clone() else {
            return Ok(Visit::Done);
        };
        let held = &charger.held;
        if !charger.keeps_list
            || held.pending_action.is_some()
            || held.unsupported_session.as_ref() == Some(&session)
        {
            return Ok(Visit::Done);
        }
        let now = chrono::Utc::now();
        if held
            .retry_after
            .as_deref()
            .is_some_and(|after| after > cms_store::format_record_time(now).as_str())
        {
            return Ok(Visit::Later);
        }
        let v201 = charger.ocpp_version.as_deref() == Some(VERSION_201);
        if held.checked_session.as_ref() != Some(&session) {
            // The gateway reads the configuration (1.6) or asks for the base report (2.0.1)
            // right after the boot; its limits are needed before the first update, and the
            // check waits for them (bounded).
            let connected_long_ago = charger.last_connection_at.as_deref().is_none_or(|at| {
                let grace =
                    chrono::Duration::from_std(self.config.configuration_grace).unwrap_or_default();
                at < cms_store::format_record_time(now - grace).as_str()
            });
            let read = match v201 {
                true => store.base_report_read(charger_id, &session).await?,
                false => store.configuration_read(charger_id, &session).await?,
            };
            if !connected_long_ago && !read {
                return Ok(Visit::Later);
            }
            // A 2.0.1 station says in its device model whether it keeps a list at all.
            if v201 && store.station_list(charger_id).await?.keeps_none {
                let at = cms_store::now_record_time();
                store
                    .local_list_kept_by_none(charger_id, &session, &at)
                    .await?;
                return Ok(Visit::Done);
            }
            let kind = ListCallKind::Check {
                expected_version: held.version,
            };
            let action = call_name("GetLocalListVersion", v201);
            self.send(&charger, &session, kind, action, json!({}))
                .await?;
            return Ok(Visit::Done);
        }
        let limits = match v201 {
            true => store.station_list(charger_id).await?.limits,
            false => store.local_list_limits(charger_id).await?,
        };
        let desired = store.desired_local_list(charger_id, now).await?;
        let wanted = desired.len();
        let (desired, cut) = fit(desired, limits.max_entries);
        if !cut {
            self.truncated.remove(&charger_id);
        } else if self.truncated.insert(charger_id) {
            tracing::warn!(
                identity = %charger.identity,
                tags = wanted,
                max = ?limits.max_entries,
                "more tags apply than the charger's local list holds: Accepted ones go first"
            );
        }
        let next = match v201 {
            true => v201::next_update_within(
                &held.entries,
                held.version,
                held.needs_full,
                &desired,
                limits,
            ),
            false => next_update(
                &held.entries,
                held.version,
                held.needs_full,
                &desired,
                limits.max_send,
            )
            .map(|update| {
                let request = send_local_list(&update);
                (update, request)
            }),
        };
        let Some((update, request)) = next else {
            // In step: the cache clear an update made due, if any.
            if held.clear_cache {
                let action = call_name("ClearCache", v201);
                let kind = ListCallKind::ClearCache;
                self.send(&charger, &session, kind, action, json!({}))
                    .await?;
            }
            return Ok(Visit::Done);
        };
        let action = call_name("SendLocalList", v201);
        let kind = ListCallKind::Update(update);
        let claimed = self.send(&charger, &session, kind, action, request).await?;
        // A tag the charger held Accepted is going: its authorisation cache could go on
        // accepting it (the list, which has priority, no longer names it), so it is cleared
        // once the list is in step.
        if claimed && drops_accepted(&held.entries, &desired) {
            let cache_on = match v201 {
                true => store.station_list(charger_id).await?.cache_enabled,
                false => store.authorization_cache_enabled(charger_id).await?,
            };
            if cache_on {
                let at = cms_store::now_record_time();
                store.local_list_clear_cache(charger_id, &at).await?;
            }
        }
        Ok(Visit::Done)
    }

    /// Claims the call and takes it; a claim lost to another replica sends nothing (`false`).
    async fn send(
        &mut self,
        charger: &ListCharger,
        session: &str,
        kind: ListCallKind,
        action: ActionName,
        request: Value,
    ) -> cms_store::Result<bool> {
        let call = ListCall {
            action_uuid: uuid::Uuid::new_v4().to_string(),
            session: session.to_string(),
            kind,
        };
        let store = &self.dispatch.store;
        let at = cms_store::now_record_time();
        if !store
            .claim_local_list_call(charger.charger_id, charger.held.revision, &call, &at)
            .await?
        {
            return Ok(false);
        }
        let target = Target {
            charger_id: charger.charger_id,
            identity: &charger.identity,
            session,
        };
        let taken = self
            .dispatch
            .take_as(
                call.action_uuid.clone(),
                &target,
                action.clone(),
                request,
                RequestedBy::system(),
            )
            .await;
        let (uuid, ended) = match taken {
            Ok(taken) => taken,
            Err(e) => {
                // Stored or not, the call's end settles the claim (a never-stored one once
                // stale): nothing to undo here.
                tracing::error!(error = %e, identity = %charger.identity, "cannot send {action}");
                return Ok(true);
            }
        };
        let dispatch = self.dispatch.clone();
        let wake = self.wake.clone();
        let times = dispatch.times;
        let deadline = tokio::time::Instant::now() + times.ttl + times.timeout;
        self.waiters.spawn(async move {
            // Stores the end at once, so the next poll settles it without waiting for the
            // materialiser.
            if let Err(e) = dispatch.wait_for_end(&uuid, ended, deadline).await {
                tracing::warn!(error = %e, "cannot store the end of a local list call");
            }
            wake.notify_one();
        });
        Ok(true)
    }
}

/// Whether an entry `held` Accepted is not in `desired` (both by key).
fn drops_accepted(held: &[ListEntry], desired: &[ListEntry]) -> bool {
    held.iter().any(|entry| {
        entry.status == "Accepted" && desired.binary_search_by(|d| d.key.cmp(&entry.key)).is_err()
    })
}

/// How `chargers.ocpp_version` names 2.0.1.
const VERSION_201: &str = "2.0.1";

/// The call `name` of the charger's version.
fn call_name(name: &str, v201: bool) -> ActionName {
    let version = match v201 {
        true => OcppVersion::V201,
        false => OcppVersion::V16,
    };
    ActionName::new(name, version)
}

/// The 1.6 SendLocalList request of `update`: removals as entries without idTagInfo.
fn send_local_list(update: &ListUpdate) -> Value {
    let entries: Vec<Value> = update
        .changes
        .iter()
        .map(|change| match change {
            ListChange::Upsert(entry) => authorization_data(entry),
            ListChange::Remove { id_tag, .. } => json!({"idTag": id_tag}),
        })
        .collect();
    json!({
        "listVersion": update.version,
        "updateType": update.update_type.as_str(),
        "localAuthorizationList": entries,
    })
}

fn authorization_data(entry: &ListEntry) -> Value {
    let mut info = json!({"status": entry.status});
    if let Some(expiry) = &entry.expiry_date {
        info["expiryDate"] = json!(expiry);
    }
    if let Some(parent) = &entry.parent_id_tag {
        info["parentIdTag"] = json!(parent);
    }
    json!({"idTag": entry.id_tag, "idTagInfo": info})
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_store::local_lists::UpdateType;

    #[test]
    fn only_an_accepted_entry_going_away_clears_the_cache() {
        let entry = |tag: &str, status: &str| ListEntry {
            id_tag: tag.into(),
            key: tag.to_ascii_uppercase(),
            status: status.into(),
            expiry_date: None,
            parent_id_tag: None,
        };
        let held = [entry("a", "Accepted"), entry("b", "Blocked")];
        assert!(!drops_accepted(&held, &held), "in step");
        assert!(
            !drops_accepted(&held, &[entry("a", "Accepted")]),
            "b was Blocked"
        );
        let blocked = [entry("a", "Blocked"), entry("b", "Blocked")];
        assert!(
            !drops_accepted(&held, &blocked),
            "the list's Blocked has priority"
        );
        assert!(drops_accepted(&held, &[entry("b", "Blocked")]), "a removed");
    }

    #[test]
    fn removals_go_without_id_tag_info_and_dates_and_parents_with_it() {
        let entry = ListEntry {
            id_tag: "card-1".into(),
            key: "CARD-1".into(),
            status: "Accepted".into(),
            expiry_date: Some("2030-01-01T00:00:00Z".into()),
            parent_id_tag: Some("fleet".into()),
        };
        let update = ListUpdate {
            update_type: UpdateType::Differential,
            version: 4,
            changes: vec![
                ListChange::Remove {
                    id_tag: "old".into(),
                    key: "OLD".into(),
                },
                ListChange::Upsert(entry.clone()),
            ],
            result: vec![entry],
        };
        assert_eq!(
            send_local_list(&update),
            json!({"listVersion": 4, "updateType": "Differential", "localAuthorizationList": [
                {"idTag": "old"},
                {"idTag": "card-1", "idTagInfo": {"status": "Accepted",
                  "expiryDate": "2030-01-01T00:00:00Z", "parentIdTag": "fleet"}}
            ]})
        );
    }
}
