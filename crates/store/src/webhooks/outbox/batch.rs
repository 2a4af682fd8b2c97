//! The events of a batch of state changes (the materialiser's), noted change by change and
//! written with the batch.

use super::{
    ChargerRef, NewEvent, anyone_listens, charger_event, charger_ref, connector_status, insert,
    refused,
};
use crate::Result;
use crate::state::StateChange;
use serde_json::json;
use sqlx::AnyConnection;
use std::collections::HashMap;

/// The events of one store transaction, gathered change by change and written before its
/// commit.
pub(crate) struct Outbox {
    on: bool,
    chargers: HashMap<String, Option<ChargerRef>>,
    events: Vec<NewEvent>,
}

impl Outbox {
    pub(crate) async fn open(db: &mut AnyConnection) -> Result<Outbox> {
        Ok(Outbox {
            on: anyone_listens(db).await?,
            chargers: HashMap::new(),
            events: Vec::new(),
        })
    }

    /// Notes the events of `change`, before it is applied (a status is compared with the one
    /// it replaces).
    pub(crate) async fn note(
        &mut self,
        db: &mut AnyConnection,
        change: &StateChange,
    ) -> Result<()> {
        if !self.on {
            return Ok(());
        }
        use StateChange::*;
        // Who, and when its gateway received it: a batch holds several topics' records (a
        // charger's messages, its actions' reports), each topic in its order but not in order
        // with the others, so the batch's events are written in the order their changes came.
        let (identity, received) = match change {
            Connected { identity, at, .. }
            | Disconnected { identity, at, .. }
            | Booted { identity, at, .. }
            | Status { identity, at, .. }
            | EvseStatus { identity, at, .. }
            | TransactionStarted { identity, at, .. }
            | TransactionStopped { identity, at, .. } => (identity, at),
            IdTagRefused { identity, at, .. } => (identity, at),
            TransactionEvent(event) => (&event.identity, &event.at),
            // Its end as the gateway saw it: the report may be applied long after (by the
            // request that waited for it, or the reports' follower).
            ActionReported(report) => (
                &report.identity,
                report.finished_at.as_ref().unwrap_or(&report.at),
            ),
            _ => return Ok(()),
        };
        let Some(charger) = self.charger(db, identity).await? else {
            return Ok(());
        };
        let mut events = Vec::new();
        match change {
            Connected {
                session,
                at,
                ocpp_version,
                ..
            } => events.push(charger_event(
                &charger,
                identity,
                "charger.connected",
                &[session],
                at,
                json!({ "session": session, "ocpp_version": ocpp_version }),
            )),
            Disconnected { session, at, .. } => events.push(charger_event(
                &charger,
                identity,
                "charger.disconnected",
                &[session],
                at,
                json!({ "session": session }),
            )),
            Booted {
                vendor,
                model,
                serial_number,
                firmware_version,
                at,
                ..
            } => events.push(charger_event(
                &charger,
                identity,
                "charger.booted",
                &[at],
                at,
                json!({
                    "vendor": vendor, "model": model, "serial_number": serial_number,
                    "firmware_version": firmware_version,
                }),
            )),
            Status {
                connector_id,
                status,
                error,
                info,
                vendor_error_code,
                at,
                ..
            } => {
                let before = connector_status(db, charger.id, *connector_id).await?;
                let data = json!({
                    "connector_id": connector_id, "status": status, "error_code": error,
                    "info": info, "vendor_error_code": vendor_error_code,
                    "previous_status": before.as_ref().map(|(s, _)| s),
                });
                let key = [&connector_id.to_string()[..], status, error, at];
                if before.as_ref().map(|(s, e)| (s.as_str(), e.as_str()))
                    != Some((status.as_str(), error.as_str()))
                {
                    let kind = "connector.status_changed";
                    events.push(charger_event(
                        &charger,
                        identity,
                        kind,
                        &key,
                        at,
                        data.clone(),
                    ));
                }
                let faulted = status == "Faulted" || error != "NoError";
                let was_faulted = before.is_some_and(|(s, e)| s == "Faulted" || e != "NoError");
                if faulted && !was_faulted {
                    let kind = "charger.faulted";
                    events.push(charger_event(&charger, identity, kind, &key, at, data));
                }
            }
            EvseStatus {
                evse_id,
                connector_id,
                ocpp_status,
                timestamp,
                ..
            } => {
                let key = [
                    &evse_id.to_string()[..],
                    &connector_id.to_string(),
                    ocpp_status,
                    timestamp,
                ];
                let data = json!({
                    "evse_id": evse_id, "connector_id": connector_id, "status": ocpp_status,
                });
                let kind = "connector.status_changed";
                events.push(charger_event(
                    &charger,
                    identity,
                    kind,
                    &key,
                    timestamp,
                    data.clone(),
                ));
                if ocpp_status == "Faulted" {
                    events.push(charger_event(
                        &charger,
                        identity,
                        "charger.faulted",
                        &key,
                        timestamp,
                        data,
                    ));
                }
            }
            TransactionStarted {
                ocpp_transaction_id,
                connector_id,
                id_tag,
                id_tag_status,
                meter_start,
                started_at,
                ..
            } => {
                let id = ocpp_transaction_id.to_string();
                let mut event = charger_event(
                    &charger,
                    identity,
                    "transaction.started",
                    &[&id],
                    started_at,
                    json!({
                        "transaction_id": ocpp_transaction_id, "connector_id": connector_id,
                        "id_tag": id_tag, "id_tag_status": id_tag_status,
                        "meter_start_wh": meter_start, "started_at": started_at,
                    }),
                );
                event.sensitive = true;
                events.push(event);
                if let Some(status) = id_tag_status.as_deref().filter(|s| *s != "Accepted") {
                    events.push(refused(&charger, identity, id_tag, status, &id, started_at));
                }
            }
            IdTagRefused {
                id_tag, status, at, ..
            } => {
                let mut event = charger_event(
                    &charger,
                    identity,
                    "id_tag.refused",
                    &[id_tag, at],
                    at,
                    json!({ "id_tag": id_tag, "status": status, "transaction_id": null }),
                );
                event.sensitive = true;
                events.push(event);
            }
            TransactionStopped {
                ocpp_transaction_id,
                stopped_at,
                ..
            } => {
                let which = super::Ended::V16(identity, *ocpp_transaction_id);
                events.push(super::ended::placeholder(&charger, &which, stopped_at));
            }
            TransactionEvent(event) => {
                use crate::station_events::EventType;
                if event.event_type == EventType::Ended {
                    let which = super::Ended::V201(identity, &event.station_transaction_id);
                    events.push(super::ended::placeholder(
                        &charger,
                        &which,
                        &event.timestamp,
                    ));
                }
                if event.event_type != EventType::Started {
                    return Ok(());
                }
                let id = &event.station_transaction_id;
                let mut started = charger_event(
                    &charger,
                    identity,
                    "transaction.started",
                    &[id],
                    &event.timestamp,
                    json!({
                        "transaction_id": id, "evse_id": event.evse_id,
                        "id_tag": event.id_tag, "id_tag_status": event.id_tag_status,
                        "started_at": event.timestamp,
                    }),
                );
                started.sensitive = true;
                events.push(started);
                if let (Some(tag), Some(status)) = (&event.id_tag, &event.id_tag_status)
                    && status != "Accepted"
                {
                    events.push(refused(
                        &charger,
                        identity,
                        tag,
                        status,
                        id,
                        &event.timestamp,
                    ));
                }
            }
            ActionReported(report) => {
                let Some(finished_at) = &report.finished_at else {
                    return Ok(());
                };
                let action = &report.action;
                events.push(charger_event(
                    &charger,
                    identity,
                    "action.finished",
                    &[&action.uuid],
                    finished_at,
                    json!({
                        "action_uuid": action.uuid, "action": action.action,
                        "state": report.status, "error_code": report.error_code,
                        "error_description": report.error_description,
                        "sent_at": report.sent_at, "finished_at": finished_at,
                    }),
                ));
            }
            _ => {}
        }
        self.events.extend(events.into_iter().map(|mut event| {
            event.received_at = received.clone();
            event
        }));
        Ok(())
    }

    /// Writes the events noted, in the order noted.
    pub(crate) async fn write(self, db: &mut AnyConnection) -> Result<()> {
        let mut events = self.events;
        // Stable: a change's events stay in the order noted.
        events.sort_by(|a, b| a.received_at.cmp(&b.received_at));
        insert(db, &events).await
    }

    async fn charger(
        &mut self,
        db: &mut AnyConnection,
        identity: &str,
    ) -> Result<Option<ChargerRef>> {
        if let Some(known) = self.chargers.get(identity) {
            return Ok(known.clone());
        }
        let found = charger_ref(db, identity).await?;
        self.chargers.insert(identity.to_string(), found.clone());
        Ok(found)
    }
}
