//! What the materialiser learns from the bus, written to the store one batch per transaction.

use crate::latest_readings::{LatestReadings, Reading};
use crate::session_end::end_session;
use crate::transaction_readings::EarliestEnergy;
use crate::{Result, Store};
use sqlx::AnyConnection;
use std::collections::HashMap;

/// A meter's energy register at a moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnergyReading {
    /// Record time form.
    pub at: String,
    pub wh: i64,
}

/// A change of charger state, derived from one bus record. Times are record timestamps; `at` is
/// when the gateway received the message.
#[derive(Debug, Clone, PartialEq)]
pub enum StateChange {
    Connected {
        identity: String,
        session: String,
        server: String,
        at: String,
        /// The OCPP version agreed, `1.6` or `2.0.1`; `None` keeps the one known.
        ocpp_version: Option<String>,
    },
    Disconnected {
        identity: String,
        session: String,
        at: String,
    },
    /// The gateway `server` started at `at`: the sessions it held before are over (it may
    /// have crashed without a word of them). `beacons`: it publishes `gateway_alive` beacons,
    /// so its start is a sign of life; a gateway of an older version does not, and is no
    /// longer judged by its silence.
    GatewayStarted {
        server: String,
        at: String,
        beacons: bool,
    },
    /// The gateway `server` was alive at `at` (its beacon).
    GatewayAlive {
        server: String,
        at: String,
    },
    /// The gateway of the charger's session connected to, or lost, one of its proxy servers.
    UpstreamState {
        identity: String,
        session: String,
        /// The server's place in the charger's list (its URL may hold a password, which the
        /// gateway keeps off the bus).
        position: i64,
        connected: bool,
        at: String,
    },
    Heartbeat {
        identity: String,
        at: String,
    },
    Booted {
        identity: String,
        vendor: String,
        model: String,
        serial_number: Option<String>,
        firmware_version: Option<String>,
        at: String,
    },
    Status {
        identity: String,
        connector_id: i64,
        status: String,
        error: String,
        info: Option<String>,
        vendor_id: Option<String>,
        vendor_error_code: Option<String>,
        at: String,
    },
    /// The newest reading of a connector, as the REST `meterValue` array.
    MeterValue {
        identity: String,
        connector_id: i64,
        meter_value: String,
        /// Newest sample time in the reading (record timestamp form).
        measured_at: String,
        /// The energy register, to be kept for the cost of the connector's priced
        /// transaction (the earliest of each minute is: `transaction_readings`); `None` when
        /// the reading holds none, or when the materialiser knows its minute has an earlier one.
        energy: Option<EnergyReading>,
        at: String,
    },
    /// An energy register reading kept only for pricing (its reading is not the newest).
    TransactionEnergy {
        identity: String,
        connector_id: i64,
        energy: EnergyReading,
    },
    TransactionStarted {
        identity: String,
        ocpp_transaction_id: i64,
        connector_id: i64,
        id_tag: String,
        /// How the gateway answered the tag: a refused start is recorded all the same.
        id_tag_status: Option<String>,
        meter_start: i64,
        reservation_id: Option<i64>,
        started_at: String,
        at: String,
    },
    TransactionStopped {
        identity: String,
        ocpp_transaction_id: i64,
        meter_stop: i64,
        stopped_at: String,
        reason: String,
        at: String,
        /// Its `transactionData`'s signed readings (`signed_values`).
        signed: Vec<crate::signed_values::SignedValue>,
    },
    /// A charger was told its tag is not accepted in answer to an Authorize (kept nowhere; a
    /// team's `id_tag.refused` webhook hears of it).
    IdTagRefused {
        identity: String,
        id_tag: String,
        status: String,
        at: String,
    },
    /// A 2.0.1 station's StatusNotification of one of an EVSE's connectors
    /// (`station_events`); `timestamp` is the station's, in record time form.
    EvseStatus {
        identity: String,
        evse_id: i64,
        connector_id: i64,
        /// The 2.0.1 `connectorStatus`.
        ocpp_status: String,
        timestamp: String,
        at: String,
    },
    /// What a 2.0.1 station told of its smart charging (`smart_charging::station_reports`;
    /// boxed: it is large, and rare).
    StationChargingReport(Box<crate::smart_charging::station_reports::StationReport>),
    /// A 2.0.1 station's TransactionEvent (`station_events`; boxed: it is large).
    TransactionEvent(Box<crate::station_events::TransactionEvent>),
    /// A gateway's report on an action (boxed: it is large, and rare beside the rest).
    ActionReported(Box<crate::actions::ActionReported>),
    /// What one NotifyReport of a 2.0.1 station lists of its device model.
    DeviceModelReported {
        identity: String,
        variables: Vec<crate::device_model::ReportedVariable>,
        /// The report's requestId when this is its last part (no `tbc`): the local-list
        /// keeper waits for the base report's end (crate::local_lists).
        ended_request: Option<i64>,
        at: String,
    },
    /// A charger's firmware update or log upload status (`firmware_logs`).
    TransferStatus(crate::firmware_logs::TransferStatus),
    /// A station ended a reservation (2.0.1 ReservationStatusUpdate): `status` is `expired` or
    /// `removed` (`reservations`).
    ReservationEnded {
        identity: String,
        reservation_id: i64,
        status: String,
        at: String,
    },
    /// A station's SecurityEventNotification (`security`).
    SecurityEvent(crate::security::SecurityEvent),
    /// A station's SignCertificate: kept nowhere; the API's signer (which the materialiser
    /// hands it to once the batch is stored) checks and signs it.
    CertificateRequested {
        identity: String,
        /// The CSR, PEM as the station sent it.
        csr: String,
        /// 2.0.1's `certificateType` (`ChargingStationCertificate` or `V2GCertificate`);
        /// `None` when the station gave none (always, from 1.6 stations).
        certificate_type: Option<String>,
        at: String,
    },
}

impl Store {
    /// Applies a batch of changes in one transaction: all of them or none.
    pub async fn apply(&self, changes: &[StateChange]) -> Result<()> {
        let mut tx = self.begin_write().await?;
        // Actions' reports touch nothing else the batch does: they go last, together.
        let mut reports = Vec::new();
        // Readings' newest values are written many to a statement: a run of them is held
        // until a change that is not a reading, which may depend on them, comes.
        let mut readings = LatestReadings::new(self.backend);
        // So are the energy registers kept for pricing, by the minute.
        let mut energy = EarliestEnergy::default();
        // A 2.0.1 transaction's events of the batch go in together, after the rest.
        let events = transactions_of(changes);
        // The webhooks' events of the batch, committed with it.
        let mut outbox = crate::webhooks::outbox::Outbox::open(&mut tx).await?;
        for change in changes {
            use StateChange::*;
            if !matches!(
                change,
                MeterValue { .. }
                    | TransactionEnergy { .. }
                    | ActionReported(_)
                    | TransactionEvent(_)
            ) {
                readings.flush(&mut tx).await?;
                energy.flush(&mut tx).await?;
            }
            let held = Held {
                reports: &mut reports,
                readings: &mut readings,
                energy: &mut energy,
            };
            outbox.note(&mut tx, change).await?;
            crate::reservations::note_use(&mut tx, change).await?;
            if let TransactionEvent(_) = change {
                continue;
            }
            apply_one(&mut tx, change, held).await?;
        }
        let keys: Vec<(&str, &str)> = (events.iter())
            .map(|group| {
                (
                    group[0].identity.as_str(),
                    group[0].station_transaction_id.as_str(),
                )
            })
            .collect();
        let mut stored = crate::station_events::batch::lookup(&mut tx, self.backend, &keys).await?;
        let mut assemblies = Vec::new();
        for group in &events {
            let key = (
                group[0].identity.clone(),
                group[0].station_transaction_id.clone(),
            );
            // A charger removed meanwhile: nothing to keep.
            let Some(row) = stored.remove(&key) else {
                continue;
            };
            crate::station_events::transaction_events(
                &mut tx,
                group,
                row,
                &mut readings,
                &mut assemblies,
            )
            .await?;
        }
        crate::station_events::batch::write_assemblies(&mut tx, self.backend, &assemblies).await?;
        // After the transactions they sign are stored (a Started's is made just above).
        for event in events.iter().flatten().filter(|e| !e.signed.is_empty()) {
            crate::station_events::keep_signed(&mut tx, event).await?;
        }
        readings.flush(&mut tx).await?;
        energy.flush(&mut tx).await?;
        crate::actions::apply_reports(&mut tx, self.backend, &reports).await?;
        outbox.write(&mut tx).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// The batch's 2.0.1 TransactionEvents by transaction, in the order their first came, each
/// group in batch order.
fn transactions_of(changes: &[StateChange]) -> Vec<Vec<&crate::station_events::TransactionEvent>> {
    let mut groups: Vec<Vec<_>> = Vec::new();
    let mut at: HashMap<(&str, &str), usize> = HashMap::new();
    for change in changes {
        if let StateChange::TransactionEvent(event) = change {
            let key = (
                event.identity.as_str(),
                event.station_transaction_id.as_str(),
            );
            let i = *at.entry(key).or_insert_with(|| {
                groups.push(Vec::new());
                groups.len() - 1
            });
            groups[i].push(&**event);
        }
    }
    groups
}

/// What a batch holds back to write together: actions' reports, readings' newest values, and
/// energy registers kept for pricing.
pub(crate) struct Held<'h, 'a> {
    reports: &'h mut Vec<&'a crate::actions::ActionReported>,
    readings: &'h mut LatestReadings<'a>,
    energy: &'h mut EarliestEnergy<'a>,
}

/// Applies `change`, or sets it aside in `held`.
async fn apply_one<'a>(
    db: &mut AnyConnection,
    change: &'a StateChange,
    held: Held<'_, 'a>,
) -> Result<()> {
    use StateChange::*;
    match change {
        Connected {
            identity,
            session,
            server,
            at,
            ocpp_version,
        } => {
            // A connect older than the one we know (from another gateway, say) changes nothing.
            sqlx::query(
                "UPDATE chargers SET connection_status = 'online', session = $1, server = $2,
                 last_connection_at = $3, updated_at = $4, silenced_at = NULL,
                 ocpp_version = COALESCE($7, ocpp_version)
                 WHERE identity = $5 AND (last_connection_at IS NULL OR last_connection_at <= $6)",
            )
            .bind(session)
            .bind(server)
            .bind(at)
            .bind(at)
            .bind(identity)
            .bind(at)
            .bind(ocpp_version)
            .execute(&mut *db)
            .await?;
        }
        UpstreamState {
            identity,
            session,
            position,
            connected,
            at,
        } => {
            // Only the charger's current session speaks for its upstreams.
            let status = if *connected {
                "connected"
            } else {
                "disconnected"
            };
            sqlx::query(
                "UPDATE proxy_servers SET connection_status = $1, connection_status_at = $2,
                   last_connected_at = CASE WHEN $1 = 'connected' THEN $2 ELSE last_connected_at END
                 WHERE position = $3 AND charger_id =
                   (SELECT id FROM chargers WHERE identity = $4 AND session = $5)
                   AND (connection_status_at IS NULL OR connection_status_at <= $2)",
            )
            .bind(status)
            .bind(at)
            .bind(position)
            .bind(identity)
            .bind(session)
            .execute(&mut *db)
            .await?;
        }
        Disconnected {
            identity,
            session,
            at,
        } => {
            end_session(db, identity, session, at, at).await?;
            // Ended for good: a beacon of its gateway brings it back no more. (Written only
            // where a silence marked it: every disconnect comes this way.)
            sqlx::query(
                "UPDATE chargers SET silenced_at = NULL
                 WHERE identity = $1 AND session = $2 AND silenced_at IS NOT NULL",
            )
            .bind(identity)
            .bind(session)
            .execute(&mut *db)
            .await?;
        }
        GatewayStarted {
            server,
            at,
            beacons,
        } => {
            // Each session it held from before the start ends, as if it had said so: a charger
            // may have reached the restarted gateway already (its connect is newer).
            let sessions: Vec<(String, String)> = sqlx::query_as(
                "SELECT identity, session FROM chargers WHERE server = $1
                 AND connection_status = 'online' AND last_connection_at < $2",
            )
            .bind(server)
            .bind(at)
            .fetch_all(&mut *db)
            .await?;
            for (identity, session) in &sessions {
                end_session(db, identity, session, at, at).await?;
            }
            // Nor do those its last run held that the sweep ended: they are over too.
            sqlx::query(
                "UPDATE chargers SET silenced_at = NULL WHERE server = $1
                 AND silenced_at IS NOT NULL AND last_connection_at < $2",
            )
            .bind(server)
            .bind(at)
            .execute(&mut *db)
            .await?;
            if *beacons {
                crate::gateways::seen(db, server, at).await?;
            } else {
                crate::gateways::forget(db, server, at).await?;
            }
        }
        GatewayAlive { server, at } => {
            crate::gateways::seen(db, server, at).await?;
            crate::gateways::heard_again(db, server, at).await?;
        }
        // Kept nowhere: the webhooks' outbox alone hears of it.
        IdTagRefused { .. } => {}
        Heartbeat { identity, at } => {
            sqlx::query(
                "UPDATE chargers SET last_heartbeat_at = $1, updated_at = $2 WHERE identity = $3",
            )
            .bind(at)
            .bind(at)
            .bind(identity)
            .execute(&mut *db)
            .await?;
        }
        Booted {
            identity,
            vendor,
            model,
            serial_number,
            firmware_version,
            at,
        } => {
            sqlx::query(
                "UPDATE chargers SET vendor = $1, model = $2, serial_number = $3, firmware_version = $4,
                 updated_at = $5 WHERE identity = $6",
            )
            .bind(vendor)
            .bind(model)
            .bind(serial_number)
            .bind(firmware_version)
            .bind(at)
            .bind(identity)
            .execute(&mut *db)
            .await?;
        }
        Status {
            identity,
            connector_id: 0,
            status,
            error,
            info,
            vendor_id,
            vendor_error_code,
            at,
        } => {
            // Connector 0 is the charger itself.
            sqlx::query(
                "UPDATE chargers SET status = $1, error = $2, error_info = $3, vendor_id = $4,
                 vendor_error_code = $5, updated_at = $6 WHERE identity = $7",
            )
            .bind(status)
            .bind(error)
            .bind(info)
            .bind(vendor_id)
            .bind(vendor_error_code)
            .bind(at)
            .bind(identity)
            .execute(&mut *db)
            .await?;
        }
        Status {
            identity,
            connector_id,
            status,
            error,
            info,
            vendor_id,
            vendor_error_code,
            at,
        } => {
            sqlx::query(
                "INSERT INTO connectors (charger_id, connector_id, status, error, error_info,
                   vendor_id, vendor_error_code, created_at, updated_at)
                 SELECT id, $1, $2, $3, $4, $5, $6, $7, $8 FROM chargers WHERE identity = $9
                 ON CONFLICT (charger_id, connector_id) DO UPDATE SET status = excluded.status,
                   error = excluded.error, error_info = excluded.error_info,
                   vendor_id = excluded.vendor_id, vendor_error_code = excluded.vendor_error_code,
                   updated_at = excluded.updated_at",
            )
            .bind(connector_id)
            .bind(status)
            .bind(error)
            .bind(info)
            .bind(vendor_id)
            .bind(vendor_error_code)
            .bind(at)
            .bind(at)
            .bind(identity)
            .execute(&mut *db)
            .await?;
            crate::transaction_readings::keep_status(db, identity, *connector_id, status, at)
                .await?;
        }
        MeterValue {
            identity,
            connector_id,
            meter_value,
            measured_at,
            energy,
            at,
        } => {
            if let Some(energy) = energy {
                held.energy.push(identity, *connector_id, energy);
            }
            let reading = Reading {
                identity,
                connector_id: *connector_id,
                meter_value,
                measured_at,
                at,
            };
            held.readings.push(db, reading).await?;
        }
        TransactionEnergy {
            identity,
            connector_id,
            energy,
        } => held.energy.push(identity, *connector_id, energy),
        TransactionStarted { .. } => start_transaction(db, change).await?,
        EvseStatus {
            identity,
            evse_id,
            connector_id,
            ocpp_status,
            timestamp,
            at,
        } => {
            let status = (*evse_id, *connector_id, ocpp_status.as_str());
            crate::station_events::evse_status(db, identity, status, timestamp, at).await?
        }
        StationChargingReport(report) => {
            crate::smart_charging::station_reports::keep(db, report).await?
        }
        // Taken in with the batch's others, after the rest (`Store::apply`).
        TransactionEvent(_) => {}
        ActionReported(report) => held.reports.push(report),
        DeviceModelReported {
            identity,
            variables,
            ended_request,
            at,
        } => {
            crate::device_model::keep_report(db, identity, variables, at).await?;
            if let Some(request_id) = ended_request {
                crate::local_lists::keep_report_end(db, identity, *request_id, at).await?;
            }
        }
        TransferStatus(told) => crate::firmware_logs::keep(db, told).await?,
        ReservationEnded {
            identity,
            reservation_id,
            status,
            at,
        } => {
            crate::reservations::ended_by_station(db, identity, *reservation_id, status, at).await?
        }
        SecurityEvent(event) => crate::security::keep_event(db, event).await?,
        // For the signer, after the batch is stored.
        CertificateRequested { .. } => {}
        TransactionStopped {
            identity,
            ocpp_transaction_id,
            meter_stop,
            stopped_at,
            reason,
            at,
            signed,
        } => {
            let updated = sqlx::query(
                "UPDATE transactions SET meter_stop = $1, stopped_at = $2, stop_reason = $3,
                 updated_at = $4
                 WHERE charger_id = (SELECT id FROM chargers WHERE identity = $5)
                   AND ocpp_transaction_id = $6",
            )
            .bind(meter_stop)
            .bind(stopped_at)
            .bind(reason)
            .bind(at)
            .bind(identity)
            .bind(ocpp_transaction_id)
            .execute(&mut *db)
            .await?;
            if updated.rows_affected() == 0 {
                tracing::warn!(%identity, ocpp_transaction_id, "StopTransaction for a transaction never started here");
            }
            let by = crate::signed_values::SignedBy::StopTransaction(*ocpp_transaction_id);
            crate::signed_values::keep(db, identity, by, None, signed, at).await?;
        }
    }
    Ok(())
}

async fn start_transaction(db: &mut AnyConnection, change: &StateChange) -> Result<()> {
    let StateChange::TransactionStarted {
        identity,
        ocpp_transaction_id,
        connector_id,
        id_tag,
        id_tag_status,
        meter_start,
        reservation_id,
        started_at,
        at,
    } = change
    else {
        return Ok(());
    };
    let Some(charger_id): Option<i64> =
        sqlx::query_scalar("SELECT id FROM chargers WHERE identity = $1")
            .bind(identity)
            .fetch_optional(&mut *db)
            .await?
    else {
        return Ok(());
    };
    // The transaction's connector gets a row of its own even before any StatusNotification.
    let connector: i64 = sqlx::query_scalar(
        "INSERT INTO connectors (charger_id, connector_id, created_at, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (charger_id, connector_id) DO UPDATE SET connector_id = excluded.connector_id
         RETURNING id",
    )
    .bind(charger_id)
    .bind(connector_id)
    .bind(at)
    .bind(at)
    .fetch_one(&mut *db)
    .await?;
    // A charger that retried its StartTransaction after the gateway forgot it (a restart) got a
    // new id for the same transaction: keep one row and follow the id the charger now uses.
    let retried = sqlx::query(
        "UPDATE transactions SET ocpp_transaction_id = $1, updated_at = $2
         WHERE charger_id = $3 AND connector_id = $4 AND id_tag = $5 AND meter_start = $6
           AND started_at = $7 AND ocpp_transaction_id <> $8",
    )
    .bind(ocpp_transaction_id)
    .bind(at)
    .bind(charger_id)
    .bind(connector_id)
    .bind(id_tag)
    .bind(meter_start)
    .bind(started_at)
    .bind(ocpp_transaction_id)
    .execute(&mut *db)
    .await?;
    if retried.rows_affected() > 0 {
        return Ok(());
    }
    // The tariff (`transaction_tariff`): the version in force when the gateway received the
    // start (`at`), with the driver's provider's when theirs.
    let chosen = crate::transaction_tariff::chosen("$1", "$8", "$9", "$11", "$12");
    sqlx::query(&format!(
        "INSERT INTO transactions (charger_id, charger_connector_id, connector_id,
           ocpp_transaction_id, reservation_id, id_tag, meter_start, started_at, created_at, updated_at,
           id_tag_status, tariff_id, tariff_uuid, tariff, tariff_version, time_zone,
           provider_uuid)
         SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, v.tariff_id, v.tariff_uuid, v.body,
           v.version, s.time_zone, p.uuid
         {chosen}
         ON CONFLICT (charger_id, ocpp_transaction_id) DO NOTHING"
    ))
    .bind(charger_id)
    .bind(connector)
    .bind(connector_id)
    .bind(ocpp_transaction_id)
    .bind(reservation_id)
    .bind(id_tag)
    .bind(meter_start)
    .bind(started_at)
    .bind(at)
    .bind(at)
    .bind(id_tag_status)
    .bind(crate::id_tags::id_tag_key(id_tag))
    .execute(&mut *db)
    .await?;
    Ok(())
}
