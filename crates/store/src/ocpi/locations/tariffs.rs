//! The tariffs a party may pull: at each site published to its provider, the one that prices
//! its drivers there (the provider's own tariff when it has one, else the site's: docs/tariffs.md
//! "Providers"). A tariff's `last_updated` is the newest of its own update and its
//! publications to the provider, so that one newly published is within a later `date_from`.

use super::Window;
use crate::{Result, Store};
use cms_ocpi::tariffs::TariffFacts;

#[derive(sqlx::FromRow)]
struct TariffRow {
    uuid: String,
    name: String,
    currency: String,
    body: String,
    last_updated: String,
}

impl From<TariffRow> for TariffFacts {
    fn from(row: TariffRow) -> Self {
        TariffFacts {
            uuid: row.uuid,
            name: row.name,
            currency: row.currency,
            rules: serde_json::from_str(&row.body).unwrap_or_default(),
            last_updated: row.last_updated,
        }
    }
}

impl Store {
    /// The provider's (`$1`) tariffs with their `last_updated`, as rows `l`.
    fn tariffs_of_provider(&self) -> String {
        let g = self.greatest();
        format!(
            "(SELECT t.id, t.uuid, t.name, t.currency, t.body,
                {g}(t.updated_at, e.published_at) AS last_updated
             FROM tariffs t JOIN (
               SELECT COALESCE(pr.tariff_id, s.tariff_id) AS tariff_id,
                 MAX(x.created_at) AS published_at
               FROM ocpi_publications x
               JOIN sites s ON s.id = x.site_id
               JOIN providers pr ON pr.id = x.provider_id AND pr.team_id = s.team_id
               JOIN ocpi_sites o ON o.site_id = s.id
               JOIN ocpi_cpo c ON c.team_id = s.team_id
               WHERE x.provider_id = $1 AND COALESCE(pr.tariff_id, s.tariff_id) IS NOT NULL
               GROUP BY COALESCE(pr.tariff_id, s.tariff_id)) e ON e.tariff_id = t.id) l"
        )
    }

    /// A page of the provider's tariffs (oldest first) within `window`, and how many there
    /// are in it.
    pub async fn ocpi_tariffs(
        &self,
        provider_id: i64,
        window: Window,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<TariffFacts>, i64)> {
        let rows = self.tariffs_of_provider();
        let columns = "l.uuid, l.name, l.currency, l.body, l.last_updated";
        let (rows, total): (Vec<TariffRow>, i64) = window
            .page_of(self, &rows, columns, provider_id, (limit, offset))
            .await?;
        Ok((rows.into_iter().map(TariffFacts::from).collect(), total))
    }

    /// The provider's tariff `tariff_uuid`, if it prices its drivers at a site published to
    /// it.
    pub async fn ocpi_tariff(
        &self,
        provider_id: i64,
        tariff_uuid: &str,
    ) -> Result<Option<TariffFacts>> {
        let sql = format!(
            "SELECT l.uuid, l.name, l.currency, l.body, l.last_updated FROM {} WHERE l.uuid = $2",
            self.tariffs_of_provider()
        );
        let row: Option<TariffRow> = sqlx::query_as(&sql)
            .bind(provider_id)
            .bind(tariff_uuid)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(TariffFacts::from))
    }

    /// The providers (ids) whose drivers the tariff prices at a site published to them.
    pub async fn ocpi_providers_priced_by(&self, tariff_uuid: &str) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT DISTINCT x.provider_id FROM ocpi_publications x
             JOIN sites s ON s.id = x.site_id
             JOIN providers pr ON pr.id = x.provider_id AND pr.team_id = s.team_id
             JOIN tariffs t ON t.id = COALESCE(pr.tariff_id, s.tariff_id)
             WHERE t.uuid = $1 ORDER BY x.provider_id",
        )
        .bind(tariff_uuid)
        .fetch_all(self.db())
        .await?)
    }

    /// The sites (ids) published to the provider.
    pub async fn ocpi_provider_sites(&self, provider_id: i64) -> Result<Vec<i64>> {
        Ok(sqlx::query_scalar(
            "SELECT x.site_id FROM ocpi_publications x
             JOIN sites s ON s.id = x.site_id
             JOIN providers pr ON pr.id = x.provider_id AND pr.team_id = s.team_id
             WHERE x.provider_id = $1 ORDER BY x.site_id",
        )
        .bind(provider_id)
        .fetch_all(self.db())
        .await?)
    }
}
