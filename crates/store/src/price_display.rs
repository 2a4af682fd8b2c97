//! Which transactions have their prices shown on the charger (docs/tariffs.md "Prices on the
//! charger"): priced, at a site that shows prices, on a charger with the `pro` licence whose
//! kept configuration says it displays them (`CustomDisplayCostAndPrice` true, read after boot).

use crate::transactions::TransactionRow;
use crate::{Result, Store};

/// A transaction whose prices are shown, and where to send them.
#[derive(Debug, Clone)]
pub struct PriceDisplay {
    pub transaction: TransactionRow,
    pub charger_id: i64,
    pub identity: String,
    /// The charger's session while it is online (messages go to it), else `None`.
    pub session: Option<String>,
}

/// A charger shows prices, on `chargers c` and `sites s`: its site shows them, it has the
/// `pro` licence, and its configuration says it can.
const CHARGER_SHOWS: &str = "s.show_prices = 1 AND c.license_pro = 1
    AND EXISTS (SELECT 1 FROM charger_settings cs WHERE cs.charger_id = c.id
                AND cs.key = 'CustomDisplayCostAndPrice' AND LOWER(cs.value) = 'true')";

impl Store {
    /// Whether any site shows prices on its chargers.
    pub async fn any_site_shows_prices(&self) -> Result<bool> {
        let any: Option<i64> =
            sqlx::query_scalar("SELECT id FROM sites WHERE show_prices = 1 LIMIT 1")
                .fetch_optional(self.db())
                .await?;
        Ok(any.is_some())
    }

    /// The charger's transaction `ocpp_transaction_id`, if its prices are shown.
    pub async fn price_display(
        &self,
        identity: &str,
        ocpp_transaction_id: i64,
    ) -> Result<Option<PriceDisplay>> {
        let found: Option<(i64, Option<String>, String)> = sqlx::query_as(&format!(
            "SELECT c.id, c.session, c.connection_status FROM transactions t
             JOIN chargers c ON c.id = t.charger_id JOIN sites s ON s.id = c.site_id
             WHERE c.identity = $1 AND t.ocpp_transaction_id = $2
               AND t.tariff IS NOT NULL AND {CHARGER_SHOWS}"
        ))
        .bind(identity)
        .bind(ocpp_transaction_id)
        .fetch_optional(self.db())
        .await?;
        let Some((charger_id, session, status)) = found else {
            return Ok(None);
        };
        let Some(transaction) = self.transaction_of(identity, ocpp_transaction_id).await? else {
            return Ok(None);
        };
        Ok(Some(PriceDisplay {
            transaction,
            charger_id,
            identity: identity.to_string(),
            session: session.filter(|_| status == "online"),
        }))
    }

    /// The transaction going on at the charger's connector, if its prices are shown.
    pub async fn open_price_display(
        &self,
        identity: &str,
        connector_id: i64,
    ) -> Result<Option<PriceDisplay>> {
        // The newest open one, shown or not: an older one whose stop was lost is not it.
        let open: Option<i64> = sqlx::query_scalar(
            "SELECT t.ocpp_transaction_id FROM transactions t
             JOIN chargers c ON c.id = t.charger_id
             WHERE c.identity = $1 AND t.connector_id = $2 AND t.stopped_at IS NULL
             ORDER BY t.started_at DESC LIMIT 1",
        )
        .bind(identity)
        .bind(connector_id)
        .fetch_optional(self.db())
        .await?;
        match open {
            Some(id) => self.price_display(identity, id).await,
            None => Ok(None),
        }
    }

    /// The charger, if it shows prices (the conditions above but a transaction), with its
    /// site's tariff and time zone: what its default price is made of.
    pub async fn charger_price_display(&self, identity: &str) -> Result<Option<ChargerDisplay>> {
        let found: Option<(i64, Option<String>, String, String, String)> =
            sqlx::query_as(&format!(
                "SELECT c.id, c.session, c.connection_status, t.body, s.time_zone FROM chargers c
                 JOIN sites s ON s.id = c.site_id JOIN tariffs t ON t.id = s.tariff_id
                 WHERE c.identity = $1 AND {CHARGER_SHOWS}"
            ))
            .bind(identity)
            .fetch_optional(self.db())
            .await?;
        Ok(found.map(
            |(charger_id, session, status, tariff, time_zone)| ChargerDisplay {
                charger_id,
                session: session.filter(|_| status == "online"),
                tariff,
                time_zone,
            },
        ))
    }
}

/// A charger that shows prices, with its site's tariff (JSON) and time zone.
#[derive(Debug, Clone)]
pub struct ChargerDisplay {
    pub charger_id: i64,
    pub session: Option<String>,
    pub tariff: String,
    pub time_zone: String,
}
