//! OCPI commands (docs/ocpi.md "Commands"): each command a provider's eMSP sent, with the
//! action that carries it (`ocpi_commands`, migration 0042), and what a command names, looked
//! up as the party may see it: a location (a site), an EVSE (a charger), a session (a
//! transaction), a reservation it made.

use crate::reservations::{NewReservation, Reservation};
use crate::{Result, Store, now_record_time};

/// A command on its way into the table (before its action is taken).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewCommand {
    pub provider_id: i64,
    /// `START_SESSION`, `STOP_SESSION`, ... (cms_ocpi::commands::CommandType).
    pub command: String,
    pub response_url: String,
    pub charger_id: Option<i64>,
    pub location_id: Option<String>,
    pub evse_uid: Option<String>,
    pub connector_id: Option<String>,
    pub session_id: Option<String>,
    pub reservation_id: Option<String>,
    pub authorization_reference: Option<String>,
    pub token_uid: Option<String>,
    /// cms's reservation (its OCPP reservationId).
    pub cms_reservation_id: Option<i64>,
}

/// A command as kept.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct CommandRow {
    pub id: i64,
    pub provider_id: i64,
    pub command: String,
    pub response_url: String,
    pub charger_id: Option<i64>,
    pub action_uuid: Option<String>,
    pub location_id: Option<String>,
    pub evse_uid: Option<String>,
    pub connector_id: Option<String>,
    pub session_id: Option<String>,
    pub reservation_id: Option<String>,
    pub authorization_reference: Option<String>,
    pub token_uid: Option<String>,
    pub cms_reservation_id: Option<i64>,
    /// The CommandResponse's result; `None` while the action is being taken.
    pub response: Option<String>,
    /// The CommandResult pushed, once the action ended.
    pub result: Option<String>,
    pub created_at: String,
    pub finished_at: Option<String>,
}

const COLUMNS: &str = "o.id, o.provider_id, o.command, o.response_url, o.charger_id,
    o.action_uuid, o.location_id, o.evse_uid, o.connector_id, o.session_id, o.reservation_id,
    o.authorization_reference, o.token_uid, o.cms_reservation_id, o.response, o.result,
    o.created_at, o.finished_at";

/// A command whose action ended, with how it ended (the action's row).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct FinishedCommand {
    pub id: i64,
    pub provider_id: i64,
    pub command: String,
    pub response_url: String,
    /// The action: `answered`, `failed`, `timed_out`, `expired` (or not final yet).
    pub action: String,
    pub status: String,
    /// The station's answer (JSON), when `answered`.
    pub response: Option<String>,
    pub error_code: Option<String>,
    pub error_description: Option<String>,
}

/// An EVSE (a charger) a command may name.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Evse {
    pub charger_id: i64,
    pub uuid: String,
    pub identity: String,
    /// `1.6`, `2.0.1`; `None` for a charger never connected.
    pub ocpp_version: Option<String>,
}

/// A session (a transaction) a STOP_SESSION names, with its charger.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SessionRef {
    pub transaction_id: i64,
    pub charger_id: i64,
    pub identity: String,
    pub ocpp_version: Option<String>,
    /// The 1.6 transactionId.
    pub ocpp_transaction_id: i64,
    /// The 2.0.1 station's transactionId.
    pub station_transaction_id: Option<String>,
    pub stopped_at: Option<String>,
}

/// A reservation an eMSP made, with its charger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReservationRef {
    pub reservation: Reservation,
    pub identity: String,
    pub ocpp_version: Option<String>,
}

/// Which sites a provider's party may command: those published to the provider.
const SITE_SEEN: &str =
    "EXISTS (SELECT 1 FROM ocpi_publications p WHERE p.site_id = s.id AND p.provider_id = $2)";

impl Store {
    /// Keeps a command about to be sent on (no action yet, no response); its id.
    pub async fn ocpi_add_command(&self, new: &NewCommand) -> Result<i64> {
        Ok(sqlx::query_scalar(
            "INSERT INTO ocpi_commands (provider_id, command, response_url, charger_id,
               location_id, evse_uid, connector_id, session_id, reservation_id,
               authorization_reference, token_uid, cms_reservation_id, created_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id",
        )
        .bind(new.provider_id)
        .bind(&new.command)
        .bind(&new.response_url)
        .bind(new.charger_id)
        .bind(&new.location_id)
        .bind(&new.evse_uid)
        .bind(&new.connector_id)
        .bind(&new.session_id)
        .bind(&new.reservation_id)
        .bind(&new.authorization_reference)
        .bind(&new.token_uid)
        .bind(new.cms_reservation_id)
        .bind(now_record_time())
        .fetch_one(self.db())
        .await?)
    }

    /// What cms answered command `id`: `response`, and the action that carries it (`None`
    /// when none was taken: the charger was not connected).
    pub async fn ocpi_command_answered(
        &self,
        id: i64,
        action_uuid: Option<&str>,
        response: &str,
    ) -> Result<()> {
        sqlx::query("UPDATE ocpi_commands SET action_uuid = $1, response = $2 WHERE id = $3")
            .bind(action_uuid)
            .bind(response)
            .bind(id)
            .execute(self.db())
            .await?;
        Ok(())
    }

    /// The cms reservation command `id` made (a RESERVE_NOW's, once kept).
    pub async fn ocpi_command_reservation(&self, id: i64, reservation_id: i64) -> Result<()> {
        sqlx::query("UPDATE ocpi_commands SET cms_reservation_id = $1 WHERE id = $2")
            .bind(reservation_id)
            .bind(id)
            .execute(self.db())
            .await?;
        Ok(())
    }

    /// Command `id`.
    pub async fn ocpi_command(&self, id: i64) -> Result<Option<CommandRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM ocpi_commands o WHERE o.id = $1"
        ))
        .bind(id)
        .fetch_optional(self.db())
        .await?)
    }

    /// The provider's commands, newest first (at most `limit`).
    pub async fn ocpi_commands_of_provider(
        &self,
        provider_id: i64,
        limit: i64,
    ) -> Result<Vec<CommandRow>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM ocpi_commands o WHERE o.provider_id = $1
             ORDER BY o.id DESC LIMIT $2"
        ))
        .bind(provider_id)
        .bind(limit)
        .fetch_all(self.db())
        .await?)
    }

    /// The command action `action_uuid` carries, with how the action stands.
    pub async fn ocpi_command_of_action(
        &self,
        action_uuid: &str,
    ) -> Result<Option<FinishedCommand>> {
        Ok(sqlx::query_as(
            "SELECT o.id, o.provider_id, o.command, o.response_url, a.action, a.status,
               a.response, a.error_code, a.error_description
             FROM ocpi_commands o JOIN charger_actions a ON a.uuid = o.action_uuid
             WHERE o.action_uuid = $1",
        )
        .bind(action_uuid)
        .fetch_optional(self.db())
        .await?)
    }

    /// Notes the CommandResult of command `id` (the first one noted stays).
    pub async fn ocpi_command_result(&self, id: i64, result: &str) -> Result<()> {
        sqlx::query(
            "UPDATE ocpi_commands SET result = $1, finished_at = $2
             WHERE id = $3 AND result IS NULL",
        )
        .bind(result)
        .bind(now_record_time())
        .bind(id)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// The site `location_id` names, if the provider's party may command it.
    pub async fn ocpi_command_location(
        &self,
        provider_id: i64,
        location_id: &str,
    ) -> Result<Option<i64>> {
        Ok(sqlx::query_scalar(&format!(
            "SELECT s.id FROM sites s WHERE s.uuid = $1 AND {SITE_SEEN}"
        ))
        .bind(location_id.to_ascii_lowercase())
        .bind(provider_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// The chargers of site `site_id` (those whose uuid is `evse_uid` when given), by id.
    pub async fn ocpi_command_evses(
        &self,
        site_id: i64,
        evse_uid: Option<&str>,
    ) -> Result<Vec<Evse>> {
        let uid = evse_uid.map(str::to_ascii_lowercase);
        Ok(sqlx::query_as(
            "SELECT id AS charger_id, uuid, identity, ocpp_version FROM chargers
             WHERE site_id = $1 AND ($2 IS NULL OR uuid = $2) ORDER BY id",
        )
        .bind(site_id)
        .bind(uid)
        .fetch_all(self.db())
        .await?)
    }

    /// The connector within EVSE `connector_id` of a 2.0.1 station (`evse_connector_id`), as
    /// its newest StatusNotification named it.
    pub async fn ocpi_evse_connector(
        &self,
        charger_id: i64,
        connector_id: i64,
    ) -> Result<Option<i64>> {
        let found: Option<Option<i64>> = sqlx::query_scalar(
            "SELECT evse_connector_id FROM connectors WHERE charger_id = $1 AND connector_id = $2",
        )
        .bind(charger_id)
        .bind(connector_id)
        .fetch_optional(self.db())
        .await?;
        Ok(found.flatten())
    }

    /// The session `session_id` (the transaction's uuid, in any case) if it runs on one of the provider's id
    /// tags at a site its party may command.
    pub async fn ocpi_command_session(
        &self,
        provider_id: i64,
        session_id: &str,
    ) -> Result<Option<SessionRef>> {
        Ok(sqlx::query_as(&format!(
            "SELECT t.id AS transaction_id, t.charger_id, c.identity, c.ocpp_version,
               t.ocpp_transaction_id, t.station_transaction_id, t.stopped_at
             FROM transactions t JOIN chargers c ON c.id = t.charger_id
               JOIN sites s ON s.id = c.site_id
             WHERE t.uuid = $1 AND {SITE_SEEN}
               AND t.provider_uuid = (SELECT uuid FROM providers WHERE id = $2)"
        ))
        .bind(session_id.to_ascii_lowercase())
        .bind(provider_id)
        .fetch_optional(self.db())
        .await?)
    }

    /// The reservation in force (pending or active) that the provider's RESERVE_NOW of
    /// `reservation_id` (an OCPI CiString: any case) made, with its charger.
    pub async fn ocpi_reservation_in_force(
        &self,
        provider_id: i64,
        reservation_id: &str,
    ) -> Result<Option<ReservationRef>> {
        let row: Option<(i64, i64, String, Option<String>)> = sqlx::query_as(
            "SELECT r.id, r.charger_id, c.identity, c.ocpp_version
             FROM ocpi_commands o JOIN reservations r ON r.id = o.cms_reservation_id
               JOIN chargers c ON c.id = r.charger_id
             WHERE o.provider_id = $1 AND o.command = 'RESERVE_NOW'
               AND UPPER(o.reservation_id) = $2 AND r.status IN ('pending', 'active')
             ORDER BY o.id DESC LIMIT 1",
        )
        .bind(provider_id)
        .bind(reservation_id.to_ascii_uppercase())
        .fetch_optional(self.db())
        .await?;
        let Some((id, charger_id, identity, ocpp_version)) = row else {
            return Ok(None);
        };
        let reservation = self.reservation(charger_id, id).await?;
        Ok(reservation.map(|reservation| ReservationRef {
            reservation,
            identity,
            ocpp_version,
        }))
    }

    /// Replaces reservation `id` (still in force) with `new`, `pending` again until the
    /// station answers the ReserveNow that replaces it; whether it was in force.
    pub async fn ocpi_replace_reservation(&self, id: i64, new: &NewReservation) -> Result<bool> {
        let replaced = sqlx::query(
            "UPDATE reservations SET connector_id = $1, id_tag = $2, parent_id_tag = $3,
               expires_at = $4, status = 'pending', station_status = NULL, updated_at = $5
             WHERE id = $6 AND status IN ('pending', 'active')",
        )
        .bind(new.connector_id)
        .bind(&new.id_tag)
        .bind(&new.parent_id_tag)
        .bind(&new.expires_at)
        .bind(now_record_time())
        .bind(id)
        .execute(self.db())
        .await?;
        Ok(replaced.rows_affected() > 0)
    }
}

#[cfg(test)]
mod tests;
