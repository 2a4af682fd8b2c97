//! Which transactions have their prices shown on the charger (docs/tariffs.md "Prices on the
//! charger"): priced, at a site that shows prices, on a charger with the `pro` licence whose
//! kept configuration says it displays them (`CustomDisplayCostAndPrice` true, read after boot;
//! for a 2.0.1 station, its device model's `TariffCostCtrlr` available or enabled).

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

/// A 2.0.1 station shows prices, on `chargers c` and `sites s`: its site shows them, it has the
/// `pro` licence, and its device model says it handles tariffs or costs (TariffCostCtrlr's
/// `Available` or `Enabled`, instance `Tariff` or `Cost`, true).
pub(crate) const STATION_SHOWS: &str = "s.show_prices = 1 AND c.license_pro = 1
    AND EXISTS (SELECT 1 FROM charger_variables cv WHERE cv.charger_id = c.id
                AND cv.key IN ('TariffCostCtrlr/Available:Tariff', 'TariffCostCtrlr/Available:Cost',
                               'TariffCostCtrlr/Enabled:Tariff', 'TariffCostCtrlr/Enabled:Cost')
                AND LOWER(cv.value) = 'true')";

/// Every driver at the site is priced by its tariff (with [`STATION_SHOWS`], what a 2.0.1
/// station's price text needs): no provider of the owner has a tariff of its own that may price
/// a driver at an `id_tags` site instead, which the gateway, answering at once, cannot tell.
pub(crate) const PRICED_BY_SITE: &str = "NOT (s.authorization_mode = 'id_tags' AND EXISTS (
        SELECT 1 FROM providers p WHERE p.team_id = s.team_id AND p.tariff_id IS NOT NULL))";

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
        self.shown_transaction(identity, ocpp_transaction_id, CHARGER_SHOWS)
            .await
    }

    /// A 2.0.1 station's transaction (by the station's own transactionId), if its prices are
    /// shown.
    pub async fn station_price_display(
        &self,
        identity: &str,
        station_transaction_id: &str,
    ) -> Result<Option<PriceDisplay>> {
        let row: Option<i64> = sqlx::query_scalar(
            "SELECT t.ocpp_transaction_id FROM transactions t
             JOIN chargers c ON c.id = t.charger_id
             WHERE c.identity = $1 AND t.station_transaction_id = $2",
        )
        .bind(identity)
        .bind(station_transaction_id)
        .fetch_optional(self.db())
        .await?;
        match row {
            Some(id) => self.shown_transaction(identity, id, STATION_SHOWS).await,
            None => Ok(None),
        }
    }

    /// The transaction, if it is priced and its charger shows prices by `shows`.
    async fn shown_transaction(
        &self,
        identity: &str,
        ocpp_transaction_id: i64,
        shows: &str,
    ) -> Result<Option<PriceDisplay>> {
        let found: Option<(i64, Option<String>, String)> = sqlx::query_as(&format!(
            "SELECT c.id, c.session, c.connection_status FROM transactions t
             JOIN chargers c ON c.id = t.charger_id JOIN sites s ON s.id = c.site_id
             WHERE c.identity = $1 AND t.ocpp_transaction_id = $2
               AND t.tariff IS NOT NULL AND {shows}"
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
        self.shown_charger(identity, CHARGER_SHOWS).await
    }

    /// The 2.0.1 station, if it shows prices, with its site's tariff and time zone.
    pub async fn station_charger_price_display(
        &self,
        identity: &str,
    ) -> Result<Option<ChargerDisplay>> {
        self.shown_charger(identity, STATION_SHOWS).await
    }

    async fn shown_charger(&self, identity: &str, shows: &str) -> Result<Option<ChargerDisplay>> {
        let found: Option<(i64, Option<String>, String, String, String)> =
            sqlx::query_as(&format!(
                "SELECT c.id, c.session, c.connection_status, t.body, s.time_zone FROM chargers c
                 JOIN sites s ON s.id = c.site_id JOIN tariffs t ON t.id = s.tariff_id
                 WHERE c.identity = $1 AND {shows}"
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

#[cfg(test)]
mod tests;
