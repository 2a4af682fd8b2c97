//! OCPI sessions and CDRs (docs/ocpi.md "Sessions and CDRs"): which transactions a party gets,
//! with everything their Session and CDR objects are made of; and what a party was last told
//! of each running session, so that its updates go only when something changed.
//!
//! A party gets the transactions its provider's drivers started at the sites of the provider's
//! team: those the store attributed to the provider at their start (`transactions.
//! provider_uuid`: the driver's tag was one of the provider's, and not one the team itself, or a
//! team with access to the site, holds; cms_store's `transaction_tariff`). A start the gateway
//! refused is no session. Every list here is a filter of [`of_parties`].

#[cfg(any(test, feature = "test-util"))]
pub mod fixtures;
#[cfg(test)]
mod tests;

use crate::signed_values::SignedValue;
use crate::transactions::TransactionRow;
use crate::{Result, Store};

/// A transaction as an OCPI party gets it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OcpiTransaction {
    #[sqlx(flatten)]
    pub transaction: TransactionRow,
    /// The id of its Session and CDR: the transaction's uuid.
    pub session_id: String,
    /// The party's provider.
    pub provider_id: i64,
    pub charger_uuid: String,
    pub charger_identity: String,
    pub site_uuid: String,
    pub site_name: String,
    pub street: String,
    pub house_number: i64,
    pub house_number_addition: Option<String>,
    pub postal_code: String,
    pub city: String,
    /// ISO 3166-1 alpha-2, as the site keeps it.
    pub country: String,
    /// The site's coordinates (decimal degrees as text), when known.
    pub latitude: Option<String>,
    pub longitude: Option<String>,
    /// The connector's, as the operator set them (free text; null when not set).
    pub connector_standard: Option<String>,
    pub connector_format: Option<String>,
    pub connector_power_type: Option<String>,
    /// The site team's CPO identity.
    pub cpo_country_code: String,
    pub cpo_party_id: String,
    /// The provider's (the eMSP's) identity.
    pub emsp_country_code: String,
    pub emsp_party_id: String,
    /// The OCPI Token (JSON) the eMSP pushed for the session's tag, when it did.
    pub token: Option<String>,
    /// While it runs: its connector's newest reading (the REST `meterValue` array) and that
    /// reading's newest sample time. It may be older than the transaction.
    pub latest_reading: Option<String>,
    pub latest_reading_at: Option<String>,
    /// The newest remote start (1.6 RemoteStartTransaction, 2.0.1 RequestStartTransaction) cms
    /// took for the charger before cms heard of the transaction: its request (JSON) and when.
    pub remote_start: Option<String>,
    pub remote_start_at: Option<String>,
    /// When the version of its tariff took effect.
    pub tariff_valid_from: Option<String>,
    /// Record time: the transaction's last change, or while it runs its newest reading when
    /// later.
    pub last_updated: String,
    /// The signed readings the station gave for it (`signed_values`), read for a stopped one.
    #[sqlx(skip)]
    pub signed_values: Vec<SignedValue>,
}

/// A running session of a registered party, with what was last pushed of it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct RunningSession {
    #[sqlx(flatten)]
    pub session: OcpiTransaction,
    /// The `kwh` and `total_cost` (JSON) last pushed; `pushed_kwh` null: nothing pushed yet.
    pub pushed_kwh: Option<String>,
    pub pushed_cost: Option<String>,
}

/// A page of a party's objects: those last updated in [from, to) (record times), `limit`
/// after `offset`, in the order the transactions were made.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Window {
    pub from: Option<String>,
    pub to: Option<String>,
    pub offset: i64,
    pub limit: i64,
}

/// The columns of `TransactionRow`, of `t`.
const TRANSACTION_COLUMNS: &str = "t.id, t.ocpp_transaction_id, t.station_transaction_id,
    t.charger_id, t.charger_connector_id, t.connector_id, t.reservation_id, t.id_tag,
    t.id_tag_status, t.meter_start, t.meter_stop, t.started_at, t.stopped_at, t.stop_reason,
    t.created_at, t.updated_at, t.tariff_uuid, t.tariff, t.tariff_version, t.time_zone, t.cost,
    t.provider_uuid, t.uuid";

/// Remote starts, of charger `t.charger_id`, taken before cms heard of transaction `t`.
const REMOTE_STARTS: &str = "FROM charger_actions a WHERE a.charger_id = t.charger_id
    AND a.action IN ('RemoteStartTransaction', 'RequestStartTransaction')
    AND a.created_at <= t.created_at";

/// The site's coordinates, from its roaming settings (`ocpi_sites`).
const COORDINATES: &str = "g.latitude, g.longitude";

/// The eMSP's Token for the session's tag, as it pushed it (`ocpi_tokens`).
const TOKEN: &str = "(SELECT k.body FROM ocpi_tokens k WHERE k.provider_id = p.id
    AND k.uid_key = UPPER(t.id_tag) ORDER BY k.id DESC LIMIT 1) AS token";

/// Every transaction of every party, as `OcpiTransaction` rows (a derived table to filter).
fn of_parties() -> String {
    format!(
        "SELECT {TRANSACTION_COLUMNS}, t.uuid AS session_id, p.id AS provider_id, c.uuid AS charger_uuid,
           c.identity AS charger_identity, s.uuid AS site_uuid, s.name AS site_name, s.street,
           s.house_number, s.house_number_addition, s.postal_code, s.city, s.country,
           {COORDINATES}, {TOKEN},
           k.standard AS connector_standard, k.format AS connector_format,
           k.power_type AS connector_power_type,
           cpo.country_code AS cpo_country_code, cpo.party_id AS cpo_party_id,
           p.country_code AS emsp_country_code, p.party_id AS emsp_party_id,
           l.meter_value AS latest_reading, l.measured_at AS latest_reading_at,
           (SELECT a.request {REMOTE_STARTS} ORDER BY a.created_at DESC LIMIT 1) AS remote_start,
           (SELECT MAX(a.created_at) {REMOTE_STARTS}) AS remote_start_at,
           (SELECT v.valid_from FROM tariff_versions v
            WHERE v.tariff_uuid = t.tariff_uuid AND v.version = t.tariff_version)
             AS tariff_valid_from,
           CASE WHEN l.measured_at IS NOT NULL AND l.measured_at > t.updated_at
             THEN l.measured_at ELSE t.updated_at END AS last_updated
         FROM transactions t
         JOIN chargers c ON c.id = t.charger_id
         JOIN sites s ON s.id = c.site_id
         JOIN providers p ON p.uuid = t.provider_uuid AND p.team_id = s.team_id
         JOIN ocpi_cpo cpo ON cpo.team_id = s.team_id
         LEFT JOIN ocpi_sites g ON g.site_id = s.id
         LEFT JOIN connectors k ON k.id = t.charger_connector_id
         LEFT JOIN latest_meter_values l ON t.stopped_at IS NULL
           AND l.charger_id = t.charger_id AND l.connector_id = t.connector_id
         WHERE t.provider_uuid IS NOT NULL AND t.uuid IS NOT NULL
           AND (t.id_tag_status IS NULL OR t.id_tag_status = 'Accepted')
           AND EXISTS (SELECT 1 FROM ocpi_publications x
                       WHERE x.site_id = s.id AND x.provider_id = p.id)"
    )
}

/// Stopped and priced (or never to be: it took no tariff).
const IS_CDR: &str = "o.stopped_at IS NOT NULL AND (o.cost IS NOT NULL OR o.tariff IS NULL)";

impl Store {
    /// A page of the provider's party's sessions (running and finished) and how many there are
    /// in the window.
    pub async fn ocpi_sessions(
        &self,
        provider_id: i64,
        window: &Window,
    ) -> Result<(Vec<OcpiTransaction>, i64)> {
        self.ocpi_page(provider_id, window, "1 = 1").await
    }

    /// A page of the provider's party's CDRs (its stopped and priced sessions) and how many
    /// there are in the window.
    pub async fn ocpi_cdrs(
        &self,
        provider_id: i64,
        window: &Window,
    ) -> Result<(Vec<OcpiTransaction>, i64)> {
        self.ocpi_page(provider_id, window, IS_CDR).await
    }

    async fn ocpi_page(
        &self,
        provider_id: i64,
        window: &Window,
        only: &str,
    ) -> Result<(Vec<OcpiTransaction>, i64)> {
        let conditions = format!(
            "o.provider_id = $1 AND ($2 IS NULL OR o.last_updated >= $2)
               AND ($3 IS NULL OR o.last_updated < $3) AND {only}"
        );
        let total: i64 = sqlx::query_scalar(&format!(
            "SELECT COUNT(*) FROM ({}) o WHERE {conditions}",
            of_parties()
        ))
        .bind(provider_id)
        .bind(window.from.as_deref())
        .bind(window.to.as_deref())
        .fetch_one(self.db())
        .await?;
        let rows = sqlx::query_as(&format!(
            "SELECT o.* FROM ({}) o WHERE {conditions} ORDER BY o.id LIMIT $4 OFFSET $5",
            of_parties()
        ))
        .bind(provider_id)
        .bind(window.from.as_deref())
        .bind(window.to.as_deref())
        .bind(window.limit)
        .bind(window.offset)
        .fetch_all(self.db())
        .await?;
        Ok((self.with_signed_values(rows).await?, total))
    }

    /// The transactions, the stopped ones with their signed readings.
    async fn with_signed_values(
        &self,
        mut rows: Vec<OcpiTransaction>,
    ) -> Result<Vec<OcpiTransaction>> {
        let stopped: Vec<i64> = (rows.iter())
            .filter(|t| t.transaction.stopped_at.is_some())
            .map(|t| t.transaction.id)
            .collect();
        let mut signed = self.transaction_signed_values(&stopped).await?;
        for row in &mut rows {
            row.signed_values = signed.remove(&row.transaction.id).unwrap_or_default();
        }
        Ok(rows)
    }

    async fn one_with_signed_values(
        &self,
        row: Option<OcpiTransaction>,
    ) -> Result<Option<OcpiTransaction>> {
        Ok(self
            .with_signed_values(row.into_iter().collect())
            .await?
            .pop())
    }

    /// The provider's party's session (or CDR) with this id; `None` for another party's.
    pub async fn ocpi_session(
        &self,
        provider_id: i64,
        uuid: &str,
    ) -> Result<Option<OcpiTransaction>> {
        let row = sqlx::query_as(&format!(
            "SELECT o.* FROM ({}) o WHERE o.provider_id = $1 AND o.uuid = $2",
            of_parties()
        ))
        .bind(provider_id)
        .bind(uuid)
        .fetch_optional(self.db())
        .await?;
        self.one_with_signed_values(row).await
    }

    /// The provider's party's session that an event of the outbox names: charger `charger_id`'s
    /// transaction `transaction_id` as `transaction.started`/`.ended` give it (a 1.6 charger's
    /// number, a 2.0.1 station's own id as text). `None` when it is not the party's.
    pub async fn ocpi_session_of_event(
        &self,
        provider_id: i64,
        charger_id: i64,
        transaction_id: &serde_json::Value,
    ) -> Result<Option<OcpiTransaction>> {
        let base = format!(
            "SELECT o.* FROM ({}) o WHERE o.provider_id = $1 AND o.charger_id = $2",
            of_parties()
        );
        let (sql, number, text) = match transaction_id {
            serde_json::Value::Number(n) => (
                format!(
                    "{base} AND o.station_transaction_id IS NULL AND o.ocpp_transaction_id = $3"
                ),
                n.as_i64(),
                None,
            ),
            serde_json::Value::String(id) => (
                format!("{base} AND o.station_transaction_id = $3"),
                None,
                Some(id.as_str()),
            ),
            _ => return Ok(None),
        };
        let query = sqlx::query_as(&sql).bind(provider_id).bind(charger_id);
        let query = match number {
            Some(n) => query.bind(n),
            None => query.bind(text),
        };
        let row = query.fetch_optional(self.db()).await?;
        self.one_with_signed_values(row).await
    }

    /// Every running session of every registered party, with what was last pushed of it.
    pub async fn ocpi_running_sessions(&self) -> Result<Vec<RunningSession>> {
        Ok(sqlx::query_as(&format!(
            "SELECT o.*, sp.kwh AS pushed_kwh, sp.total_cost AS pushed_cost FROM ({}) o
             JOIN ocpi_parties op ON op.provider_id = o.provider_id AND op.status = 'registered'
             LEFT JOIN ocpi_session_pushes sp
               ON sp.provider_id = o.provider_id AND sp.transaction_id = o.id
             WHERE o.stopped_at IS NULL ORDER BY o.id",
            of_parties()
        ))
        .fetch_all(self.db())
        .await?)
    }

    /// Keeps what was pushed of a running session: its `kwh` and `total_cost` (JSON).
    pub async fn ocpi_note_session_pushed(
        &self,
        provider_id: i64,
        transaction_id: i64,
        kwh: &str,
        total_cost: Option<&str>,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO ocpi_session_pushes (provider_id, transaction_id, kwh, total_cost,
               pushed_at)
             VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (provider_id, transaction_id) DO UPDATE SET kwh = EXCLUDED.kwh,
               total_cost = EXCLUDED.total_cost, pushed_at = EXCLUDED.pushed_at",
        )
        .bind(provider_id)
        .bind(transaction_id)
        .bind(kwh)
        .bind(total_cost)
        .bind(crate::now_record_time())
        .execute(self.db())
        .await?;
        Ok(())
    }

    /// Forgets what was pushed of sessions that have stopped (their last push is the completed
    /// session); how many were forgotten.
    pub async fn ocpi_forget_stopped_sessions(&self) -> Result<u64> {
        let done = sqlx::query(
            "DELETE FROM ocpi_session_pushes WHERE transaction_id IN
               (SELECT id FROM transactions WHERE stopped_at IS NOT NULL)",
        )
        .execute(self.db())
        .await?;
        Ok(done.rows_affected())
    }
}
