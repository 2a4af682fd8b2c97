//! What the API's fleet state (crate `cms_api`'s `ingest::fleet`) reads of every charger: its
//! connection, statuses and open transactions, for all chargers at once, for those registered
//! after a known id, or for some identities; by primary key or small indexes, never per request.

use crate::{Result, Store};
use sqlx::Row;
use std::collections::HashMap;

/// One charger as the fleet overview counts it.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetRow {
    pub id: i64,
    pub uuid: String,
    pub identity: String,
    pub reference: Option<String>,
    pub online: bool,
    /// The charger's own status (connector 0).
    pub status: Option<String>,
    pub ocpp_version: Option<String>,
    /// The newest of its last heartbeat and last connection (record time): what the store
    /// knows of when it last spoke.
    pub last_message_at: Option<String>,
    /// `(connector_id, status)` by connector number.
    pub connectors: Vec<(i64, String)>,
    /// The connectors with an open transaction, by number.
    pub active: Vec<i64>,
}

/// A charger's connectors' statuses and open transactions' connectors.
type Extras = (Vec<(i64, String)>, Vec<i64>);

/// Which chargers to read.
pub enum FleetScope<'a> {
    All,
    /// Registered after this id.
    After(i64),
    Identities(&'a [String]),
}

impl Store {
    /// The chargers of `scope`, by id.
    pub async fn fleet_rows(&self, scope: FleetScope<'_>) -> Result<Vec<FleetRow>> {
        let (filter, binds): (String, Vec<String>) = match scope {
            FleetScope::All => (String::new(), Vec::new()),
            FleetScope::After(id) => (format!("WHERE c.id > {id}"), Vec::new()),
            FleetScope::Identities([]) => return Ok(Vec::new()),
            FleetScope::Identities(ids) => {
                let marks: Vec<String> = (1..=ids.len()).map(|n| format!("${n}")).collect();
                (
                    format!("WHERE c.identity IN ({})", marks.join(", ")),
                    ids.to_vec(),
                )
            }
        };
        let chargers_sql = format!(
            "SELECT c.id, c.uuid, c.identity, c.reference, c.connection_status, c.status,
                    c.ocpp_version, c.last_heartbeat_at, c.last_connection_at
             FROM chargers c {filter} ORDER BY c.id"
        );
        let connectors_sql = format!(
            "SELECT k.charger_id, k.connector_id, k.status FROM connectors k
             JOIN chargers c ON c.id = k.charger_id {filter}
             ORDER BY k.charger_id, k.connector_id"
        );
        // The open transactions' partial index (`transactions_open`).
        let active_sql = format!(
            "SELECT t.charger_id, t.connector_id FROM transactions t
             JOIN chargers c ON c.id = t.charger_id {filter}
             {} t.stopped_at IS NULL ORDER BY t.charger_id, t.connector_id",
            if filter.is_empty() { "WHERE" } else { "AND" }
        );
        let mut read = Vec::with_capacity(3);
        for sql in [&chargers_sql, &connectors_sql, &active_sql] {
            let mut query = sqlx::query(sql);
            for b in &binds {
                query = query.bind(b.as_str());
            }
            read.push(query.fetch_all(self.db()).await?);
        }
        let (active, connectors, chargers) = (read.pop(), read.pop(), read.pop());
        let (chargers, connectors, active) = (
            chargers.unwrap_or_default(),
            connectors.unwrap_or_default(),
            active.unwrap_or_default(),
        );
        let mut by_charger: HashMap<i64, Extras> = HashMap::new();
        for row in connectors {
            let entry = by_charger.entry(row.get("charger_id")).or_default();
            entry.0.push((row.get("connector_id"), row.get("status")));
        }
        for row in active {
            let entry = by_charger.entry(row.get("charger_id")).or_default();
            entry.1.push(row.get("connector_id"));
        }
        Ok(chargers
            .into_iter()
            .map(|row| {
                let id: i64 = row.get("id");
                let (connectors, active) = by_charger.remove(&id).unwrap_or_default();
                let heartbeat: Option<String> = row.get("last_heartbeat_at");
                let connection: Option<String> = row.get("last_connection_at");
                let connection_status: String = row.get("connection_status");
                FleetRow {
                    id,
                    uuid: row.get("uuid"),
                    identity: row.get("identity"),
                    reference: row.get("reference"),
                    online: connection_status == "online",
                    status: row.get("status"),
                    ocpp_version: row.get("ocpp_version"),
                    last_message_at: heartbeat.max(connection),
                    connectors,
                    active,
                }
            })
            .collect())
    }
}
