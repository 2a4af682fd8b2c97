//! The signed meter readings a station gave for a transaction (an Eichrecht meter's OCMF
//! records): a 1.6 StopTransaction's `SignedData` sampled values, a 2.0.1 TransactionEvent
//! Started's or Ended's `signedMeterValue`s. Kept as given for the transaction's OCPI CDR
//! (`signed_data`, docs/ocpi.md "The CDR"); cms verifies none of them.

#[cfg(test)]
mod tests;

use crate::{Result, Store};
use sqlx::AnyConnection;
use std::collections::HashMap;

/// One signed reading, as OCPI's SignedValue wants it, with how it is encoded.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct SignedValue {
    /// `Start`, `End` or `Intermediate` (from the reading's context).
    pub nature: String,
    /// The reading in plain text (the energy register it signs, when the station gave it),
    /// else empty.
    pub plain_data: String,
    /// The signed reading as the station sent it.
    pub signed_data: String,
    /// `OCMF`, or the station's 2.0.1 `encodingMethod`, or `UNKNOWN`.
    pub encoding_method: String,
    /// The meter's public key, when the station gave it.
    pub public_key: Option<String>,
}

/// Which message of the transaction gave them (one transaction's values are kept once each:
/// a batch the bus replays writes nothing new).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedBy {
    /// A 1.6 StopTransaction, of charger `identity`'s transaction number.
    StopTransaction(i64),
    /// A 2.0.1 TransactionEvent Started or Ended.
    Started,
    Ended,
}

impl SignedBy {
    fn as_str(self) -> &'static str {
        match self {
            SignedBy::StopTransaction(_) => "StopTransaction",
            SignedBy::Started => "Started",
            SignedBy::Ended => "Ended",
        }
    }
}

/// Keeps the signed values a message of charger `identity`'s transaction gave: a 1.6 one's by
/// its transaction number, a 2.0.1 one's by the station's `station_transaction_id`. Nothing for
/// a transaction not stored.
pub(crate) async fn keep(
    db: &mut AnyConnection,
    identity: &str,
    by: SignedBy,
    station_transaction_id: Option<&str>,
    values: &[SignedValue],
    at: &str,
) -> Result<()> {
    let number = match by {
        SignedBy::StopTransaction(n) => Some(n),
        _ => None,
    };
    for (position, value) in values.iter().enumerate() {
        sqlx::query(
            "INSERT INTO transaction_signed_values (transaction_id, message, position, nature,
               plain_data, signed_data, encoding_method, public_key, created_at)
             SELECT t.id, $4, $5, $6, $7, $8, $9, $10, $11 FROM transactions t
             JOIN chargers c ON c.id = t.charger_id
             WHERE c.identity = $1
               AND (t.ocpp_transaction_id = $2 OR t.station_transaction_id = $3)
             ON CONFLICT (transaction_id, message, position) DO NOTHING",
        )
        .bind(identity)
        .bind(number)
        .bind(station_transaction_id)
        .bind(by.as_str())
        .bind(position as i64)
        .bind(&value.nature)
        .bind(&value.plain_data)
        .bind(&value.signed_data)
        .bind(&value.encoding_method)
        .bind(value.public_key.as_deref())
        .bind(at)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}

#[derive(sqlx::FromRow)]
struct Row {
    transaction_id: i64,
    #[sqlx(flatten)]
    value: SignedValue,
}

impl Store {
    /// The signed values of each of these transactions that has any, in the order given
    /// (a 2.0.1 Started's before its Ended's).
    pub async fn transaction_signed_values(
        &self,
        transaction_ids: &[i64],
    ) -> Result<HashMap<i64, Vec<SignedValue>>> {
        let mut all: HashMap<i64, Vec<SignedValue>> = HashMap::new();
        if transaction_ids.is_empty() {
            return Ok(all);
        }
        let places: Vec<String> = (1..=transaction_ids.len())
            .map(|i| format!("${i}"))
            .collect();
        let sql = format!(
            "SELECT transaction_id, nature, plain_data, signed_data, encoding_method, public_key
             FROM transaction_signed_values WHERE transaction_id IN ({})
             ORDER BY transaction_id, CASE message WHEN 'Ended' THEN 1 ELSE 0 END, position",
            places.join(", ")
        );
        let mut query = sqlx::query_as::<_, Row>(&sql);
        for id in transaction_ids {
            query = query.bind(id);
        }
        for row in query.fetch_all(self.db()).await? {
            all.entry(row.transaction_id).or_default().push(row.value);
        }
        Ok(all)
    }
}
