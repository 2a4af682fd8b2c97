//! Reservations cms made on chargers (ReserveNow), one row each (table `reservations`): taken
//! `pending`, then `active` or `refused` by the station's answer, and ended `used` (a
//! transaction started with its id), `cancelled` (CancelReservation accepted), `expired` (its
//! time passed, or a 2.0.1 station said so) or `removed` (a 2.0.1 station's
//! ReservationStatusUpdate). Its `id` is the OCPP reservationId sent.

use crate::{Result, StateChange, Store};
use sqlx::AnyConnection;

/// The statuses a reservation is still in force in (the station may hold it).
const IN_FORCE: &str = "('pending', 'active')";

const COLUMNS: &str = "id, charger_id, connector_id, id_tag, parent_id_tag, expires_at, status,
    station_status, action_uuid, ended_at, created_at, updated_at";

/// A reservation as kept.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Reservation {
    pub id: i64,
    pub charger_id: i64,
    /// The 1.6 connector or the 2.0.1 EVSE; 0: any.
    pub connector_id: i64,
    pub id_tag: String,
    pub parent_id_tag: Option<String>,
    pub expires_at: String,
    pub status: String,
    /// The station's answer to ReserveNow, or how the action ended without one.
    pub station_status: Option<String>,
    pub action_uuid: Option<String>,
    pub ended_at: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// What a new reservation holds.
#[derive(Debug, Clone, Default)]
pub struct NewReservation {
    pub connector_id: i64,
    pub id_tag: String,
    pub parent_id_tag: Option<String>,
    /// Record time form.
    pub expires_at: String,
}

impl Store {
    /// Keeps a new reservation of charger `charger_id`, `pending`.
    pub async fn add_reservation(
        &self,
        charger_id: i64,
        new: &NewReservation,
    ) -> Result<Reservation> {
        let now = crate::now_record_time();
        let row = sqlx::query_as(&format!(
            "INSERT INTO reservations (charger_id, connector_id, id_tag, parent_id_tag, expires_at,
               status, created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6) RETURNING {COLUMNS}"
        ))
        .bind(charger_id)
        .bind(new.connector_id)
        .bind(&new.id_tag)
        .bind(&new.parent_id_tag)
        .bind(&new.expires_at)
        .bind(&now)
        .fetch_one(self.db())
        .await?;
        Ok(row)
    }

    /// Forgets a reservation never sent (its charger was not connected).
    pub async fn forget_reservation(&self, id: i64) -> Result<()> {
        sqlx::query("DELETE FROM reservations WHERE id = $1 AND status = 'pending'")
            .bind(id)
            .execute(self.db())
            .await?;
        Ok(())
    }

    /// Notes the ReserveNow action that carries reservation `id`.
    pub async fn reservation_sent(&self, id: i64, action_uuid: &str) -> Result<()> {
        sqlx::query("UPDATE reservations SET action_uuid = $1 WHERE id = $2")
            .bind(action_uuid)
            .bind(id)
            .execute(self.db())
            .await?;
        Ok(())
    }

    /// The station's answer to ReserveNow: `active` when `accepted`, `refused` otherwise, with
    /// `station_status`. Only a `pending` reservation changes (one used or ended meanwhile
    /// stays so).
    pub async fn reservation_answered(
        &self,
        id: i64,
        accepted: bool,
        station_status: &str,
    ) -> Result<()> {
        let now = crate::now_record_time();
        let status = if accepted { "active" } else { "refused" };
        sqlx::query(
            "UPDATE reservations SET status = $1, station_status = $2, updated_at = $3,
               ended_at = CASE WHEN $1 = 'refused' THEN $3 ELSE ended_at END
             WHERE id = $4 AND status = 'pending'",
        )
        .bind(status)
        .bind(station_status)
        .bind(&now)
        .bind(id)
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Ends reservation `id` of charger `charger_id` with `status` (`cancelled`, ...) if it is
    /// still in force; whether it was.
    pub async fn end_reservation(&self, charger_id: i64, id: i64, status: &str) -> Result<bool> {
        let now = crate::now_record_time();
        let ended = sqlx::query(&format!(
            "UPDATE reservations SET status = $1, ended_at = $2, updated_at = $2
             WHERE charger_id = $3 AND id = $4 AND status IN {IN_FORCE}"
        ))
        .bind(status)
        .bind(&now)
        .bind(charger_id)
        .bind(id)
        .execute(self.db())
        .await?;
        Ok(ended.rows_affected() > 0)
    }

    /// Reservation `id` of charger `charger_id`.
    pub async fn reservation(&self, charger_id: i64, id: i64) -> Result<Option<Reservation>> {
        Ok(sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM reservations WHERE charger_id = $1 AND id = $2"
        ))
        .bind(charger_id)
        .bind(id)
        .fetch_optional(self.db())
        .await?)
    }

    /// A page of charger `charger_id`'s reservations, newest first, and how many it has.
    pub async fn reservations_page(
        &self,
        charger_id: i64,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<Reservation>, i64)> {
        let rows = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM reservations WHERE charger_id = $1
             ORDER BY id DESC LIMIT $2 OFFSET $3"
        ))
        .bind(charger_id)
        .bind(limit)
        .bind(offset)
        .fetch_all(self.db())
        .await?;
        let total: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM reservations WHERE charger_id = $1")
                .bind(charger_id)
                .fetch_one(self.db())
                .await?;
        Ok((rows, total))
    }

    /// Ends `expired` every reservation in force whose time is up at `now` (record time);
    /// how many.
    pub async fn expire_reservations(&self, now: &str) -> Result<u64> {
        let expired = sqlx::query(&format!(
            "UPDATE reservations SET status = 'expired', ended_at = $1, updated_at = $1
             WHERE status IN {IN_FORCE} AND expires_at <= $1"
        ))
        .bind(now)
        .execute(self.db())
        .await?;
        Ok(expired.rows_affected())
    }
}

/// A station's word on reservation `reservation_id`: `expired` or `removed` (2.0.1
/// ReservationStatusUpdate); a reservation no longer in force stays as it ended.
pub(crate) async fn ended_by_station(
    db: &mut AnyConnection,
    identity: &str,
    reservation_id: i64,
    status: &str,
    at: &str,
) -> Result<()> {
    sqlx::query(&format!(
        "UPDATE reservations SET status = $1, ended_at = $2, updated_at = $2
         WHERE charger_id = (SELECT id FROM chargers WHERE identity = $3) AND id = $4
           AND status IN {IN_FORCE}"
    ))
    .bind(status)
    .bind(at)
    .bind(identity)
    .bind(reservation_id)
    .execute(&mut *db)
    .await?;
    Ok(())
}

/// A transaction that starts with a reservation's id uses it (1.6 StartTransaction's
/// `reservationId`, a 2.0.1 TransactionEvent's).
pub(crate) async fn note_use(db: &mut AnyConnection, change: &StateChange) -> Result<()> {
    let (identity, reservation_id, at) = match change {
        StateChange::TransactionStarted {
            identity,
            reservation_id: Some(id),
            at,
            ..
        } => (identity, *id, at),
        StateChange::TransactionEvent(event) => match event.reservation_id {
            Some(id) => (&event.identity, id, &event.at),
            None => return Ok(()),
        },
        _ => return Ok(()),
    };
    ended_by_station(db, identity, reservation_id, "used", at).await
}

#[cfg(test)]
mod tests;
