//! The cost of a transaction (crates/pricing, docs/tariffs.md), and the final cost written
//! once a transaction stops.

pub use cms_pricing::{cost_of, price};

use chrono::Utc;
use cms_store::Store;

/// Writes the final cost of a stopped, priced transaction that has none yet. A failure is
/// logged: the API prices a stopped transaction without a written cost on read all the same.
pub async fn write_final_cost(store: &Store, identity: &str, ocpp_transaction_id: i64) {
    let result = async {
        let Some(t) = store
            .transaction_of(identity, ocpp_transaction_id)
            .await?
            .filter(|t| t.tariff.is_some() && t.cost.is_none() && t.stopped_at.is_some())
        else {
            return Ok(());
        };
        let id = t.id;
        let readings = store.transaction_readings(&[id]).await?;
        // CPU work: off the async workers, as the API's pricing on read is.
        let now = Utc::now();
        let priced = tokio::task::spawn_blocking(move || price(&t, &readings, now))
            .await
            .unwrap_or_else(|e| Some(Err(format!("the pricing task failed: {e}"))));
        match priced {
            Some(Ok(cost)) => {
                let json = serde_json::to_string(&cost).unwrap_or_default();
                store.set_transaction_cost(id, &json).await?;
            }
            Some(Err(e)) => {
                tracing::warn!(%identity, ocpp_transaction_id, error = %e, "cannot price a stopped transaction");
            }
            None => {}
        }
        Ok::<(), cms_store::StoreError>(())
    }
    .await;
    if let Err(e) = result {
        tracing::warn!(%identity, ocpp_transaction_id, error = %e, "the final cost was not written");
    }
}

/// [`write_final_cost`] for 2.0.1 stations' transactions, known by the stations' ids, that
/// stopped and have no cost: a cost is written again after an event sent offline arrives late
/// (the store cleared it). One look-up for all of a batch's.
pub async fn write_final_station_costs(store: &Store, transactions: &[(&str, &str)]) {
    if transactions.is_empty() {
        return;
    }
    match store.stopped_unpriced_of_stations(transactions).await {
        Ok(stopped) => {
            for (identity, ocpp_transaction_id) in stopped {
                write_final_cost(store, &identity, ocpp_transaction_id).await;
            }
        }
        Err(e) => {
            tracing::warn!(error = %e, "the final costs of stations' transactions were not written");
        }
    }
}
