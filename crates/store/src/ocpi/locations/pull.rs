//! What a party may see of the sites published to its provider, as the facts cms-ocpi maps to
//! Locations and EVSEs; and, for the pushes, a charger's EVSE, a site's publication to one
//! party and the EVSE status last pushed to it.
//!
//! A site is a party's when it is published to the party's provider, that provider is (still)
//! one of the site's owner team, the site has roaming settings and its team a CPO identity.
//! Its `last_updated` is the newest of the site's update, its settings', its publication to
//! the provider, the provider's update (its tariff), its chargers' registration and last
//! connection or disconnection, and its connectors' updates: a heartbeat does not count.

use crate::{Backend, Result, Store};
use chrono::{DateTime, Utc};
use cms_ocpi::locations::{ConnectorFacts, CpoFacts, EvseFacts, LocationFacts, SiteFacts};
use std::collections::HashMap;

/// The `date_from` (inclusive) and `date_to` (exclusive) bounds of a list, on last_updated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Window {
    pub from: Option<DateTime<Utc>>,
    pub to: Option<DateTime<Utc>>,
}

impl Window {
    /// `WHERE` over `column` for the bounds set, numbering placeholders from `$first`; the
    /// values to bind, in order.
    fn filter(&self, column: &str, first: usize) -> (String, Vec<String>) {
        let mut clauses = Vec::new();
        let mut values = Vec::new();
        for (bound, op) in [(self.from, ">="), (self.to, "<")] {
            if let Some(t) = bound {
                clauses.push(format!("{column} {op} ${}", first + values.len()));
                values.push(crate::time::format_record_time(t));
            }
        }
        let filter = match clauses.is_empty() {
            true => String::new(),
            false => format!("WHERE {}", clauses.join(" AND ")),
        };
        (filter, values)
    }

    /// A page of `columns` of the rows `rows` (a derived table `l` whose `$1` is the provider)
    /// within the window, by `l.id`, and how many rows are in the window.
    pub(super) async fn page_of<T>(
        &self,
        store: &Store,
        rows: &str,
        columns: &str,
        provider_id: i64,
        (limit, offset): (i64, i64),
    ) -> Result<(Vec<T>, i64)>
    where
        T: for<'r> sqlx::FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    {
        let (filter, bounds) = self.filter("l.last_updated", 2);
        let count_sql = format!("SELECT COUNT(*) FROM {rows} {filter}");
        let mut count = sqlx::query_scalar(&count_sql).bind(provider_id);
        for bound in &bounds {
            count = count.bind(bound);
        }
        let total: i64 = count.fetch_one(store.db()).await?;
        let n = bounds.len() + 2;
        let sql = format!(
            "SELECT {columns} FROM {rows} {filter} ORDER BY l.id LIMIT ${n} OFFSET ${}",
            n + 1
        );
        let mut page = sqlx::query_as::<_, T>(&sql).bind(provider_id);
        for bound in &bounds {
            page = page.bind(bound);
        }
        let rows = page.bind(limit).bind(offset).fetch_all(store.db()).await?;
        Ok((rows, total))
    }
}

/// A site's publication to one party: what its objects carry beside the site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Publication {
    pub site_uuid: String,
    pub cpo: CpoFacts,
    /// The tariff pricing the party's drivers there: the provider's, else the site's.
    pub tariff_uuid: Option<String>,
}

#[derive(sqlx::FromRow)]
struct LocationRow {
    id: i64,
    uuid: String,
    name: String,
    street: String,
    house_number: i64,
    house_number_addition: Option<String>,
    postal_code: String,
    city: String,
    country: String,
    time_zone: String,
    latitude: String,
    longitude: String,
    parking_type: Option<String>,
    facilities: String,
    opening_times: Option<String>,
    cpo_country_code: String,
    cpo_party_id: String,
    cpo_name: String,
    cpo_website: Option<String>,
    tariff_uuid: Option<String>,
    last_updated: String,
}

impl LocationRow {
    fn cpo(&self) -> CpoFacts {
        CpoFacts {
            country_code: self.cpo_country_code.clone(),
            party_id: self.cpo_party_id.clone(),
            name: self.cpo_name.clone(),
            website: self.cpo_website.clone(),
        }
    }

    fn into_facts(self, evses: Vec<EvseFacts>) -> LocationFacts {
        LocationFacts {
            cpo: self.cpo(),
            tariff_uuid: self.tariff_uuid,
            site: SiteFacts {
                uuid: self.uuid,
                name: self.name,
                street: self.street,
                house_number: self.house_number,
                house_number_addition: self.house_number_addition,
                postal_code: self.postal_code,
                city: self.city,
                country: self.country,
                time_zone: self.time_zone,
                latitude: self.latitude,
                longitude: self.longitude,
                parking_type: self.parking_type,
                facilities: serde_json::from_str(&self.facilities).unwrap_or_default(),
                opening_times: (self.opening_times.as_deref())
                    .and_then(|text| serde_json::from_str(text).ok()),
                last_updated: self.last_updated,
            },
            evses,
        }
    }
}

#[derive(sqlx::FromRow)]
struct ChargerRow {
    id: i64,
    uuid: String,
    site_id: i64,
    identity: String,
    reference: Option<String>,
    connection_status: String,
    status: Option<String>,
    max_current: Option<f64>,
    changed_at: String,
}

#[derive(sqlx::FromRow)]
struct ConnectorRow {
    charger_id: i64,
    connector_id: i64,
    status: String,
    standard: Option<String>,
    format: Option<String>,
    power_type: Option<String>,
    max_voltage: Option<i64>,
    max_amperage: Option<i64>,
    updated_at: String,
}

impl Store {
    /// SQL's "largest of these values" (not the aggregate).
    pub(super) fn greatest(&self) -> &'static str {
        match self.backend() {
            Backend::Sqlite => "MAX",
            Backend::Postgres => "GREATEST",
        }
    }

    /// The provider's sites (`$1`) with what their Locations show, as rows `l`.
    fn locations_of_provider(&self) -> String {
        let g = self.greatest();
        format!(
            "(SELECT s.id, s.uuid, s.name, s.street, s.house_number, s.house_number_addition,
                s.postal_code, s.city, s.country, s.time_zone, o.latitude, o.longitude,
                o.parking_type, o.facilities, o.opening_times, c.country_code AS cpo_country_code,
                c.party_id AS cpo_party_id, c.name AS cpo_name, c.website AS cpo_website,
                (SELECT t.uuid FROM tariffs t WHERE t.id = COALESCE(pr.tariff_id, s.tariff_id))
                  AS tariff_uuid,
                {g}(s.updated_at, o.updated_at, x.created_at, pr.updated_at,
                  COALESCE((SELECT MAX({g}(ch.created_at, COALESCE(ch.last_connection_at, ''),
                      COALESCE(ch.last_disconnection_at, '')))
                    FROM chargers ch WHERE ch.site_id = s.id), ''),
                  COALESCE((SELECT MAX(k.updated_at) FROM connectors k
                    JOIN chargers ch ON ch.id = k.charger_id WHERE ch.site_id = s.id), ''))
                  AS last_updated
             FROM ocpi_publications x
             JOIN sites s ON s.id = x.site_id
             JOIN providers pr ON pr.id = x.provider_id AND pr.team_id = s.team_id
             JOIN ocpi_sites o ON o.site_id = s.id
             JOIN ocpi_cpo c ON c.team_id = s.team_id
             WHERE x.provider_id = $1) l"
        )
    }

    /// A page of the provider's Locations (by site id) within `window`, and how many there
    /// are in it.
    pub async fn ocpi_locations(
        &self,
        provider_id: i64,
        window: Window,
        limit: i64,
        offset: i64,
    ) -> Result<(Vec<LocationFacts>, i64)> {
        let rows = self.locations_of_provider();
        let (rows, total): (Vec<LocationRow>, i64) = window
            .page_of(self, &rows, "*", provider_id, (limit, offset))
            .await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        let mut evses = self.evses_of_sites(&ids).await?;
        let facts = (rows.into_iter())
            .map(|row| {
                let of_site = evses.remove(&row.id).unwrap_or_default();
                row.into_facts(of_site)
            })
            .collect();
        Ok((facts, total))
    }

    /// The provider's Location of the site `site_uuid`, if the site is published to it.
    pub async fn ocpi_location(
        &self,
        provider_id: i64,
        site_uuid: &str,
    ) -> Result<Option<LocationFacts>> {
        let sql = format!(
            "SELECT * FROM {} WHERE l.uuid = $2",
            self.locations_of_provider()
        );
        let row: Option<LocationRow> = sqlx::query_as(&sql)
            .bind(provider_id)
            .bind(site_uuid)
            .fetch_optional(self.db())
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let evses = self.evses_of_sites(&[row.id]).await?.remove(&row.id);
        Ok(Some(row.into_facts(evses.unwrap_or_default())))
    }

    /// The site's publication to the provider, if it is published to it.
    pub async fn ocpi_publication(
        &self,
        provider_id: i64,
        site_id: i64,
    ) -> Result<Option<Publication>> {
        let sql = format!(
            "SELECT * FROM {} WHERE l.id = $2",
            self.locations_of_provider()
        );
        let row: Option<LocationRow> = sqlx::query_as(&sql)
            .bind(provider_id)
            .bind(site_id)
            .fetch_optional(self.db())
            .await?;
        Ok(row.map(|row| Publication {
            cpo: row.cpo(),
            site_uuid: row.uuid,
            tariff_uuid: row.tariff_uuid,
        }))
    }

    /// The charger's site (id) and its EVSE's facts, wherever it is.
    pub async fn ocpi_charger_evse(&self, charger_id: i64) -> Result<Option<(i64, EvseFacts)>> {
        let chargers: Vec<ChargerRow> = sqlx::query_as(&self.chargers_sql("ch.id = $1"))
            .bind(charger_id)
            .fetch_all(self.db())
            .await?;
        let Some(charger) = chargers.into_iter().next() else {
            return Ok(None);
        };
        let connectors: Vec<ConnectorRow> = sqlx::query_as(&connectors_sql("k.charger_id = $1"))
            .bind(charger_id)
            .fetch_all(self.db())
            .await?;
        let site_id = charger.site_id;
        Ok(Some((site_id, evse_facts(charger, connectors))))
    }

    /// The EVSEs of the site's chargers.
    pub async fn ocpi_site_evses(&self, site_id: i64) -> Result<Vec<EvseFacts>> {
        Ok(self
            .evses_of_sites(&[site_id])
            .await?
            .remove(&site_id)
            .unwrap_or_default())
    }

    /// The EVSEs of the sites' chargers, by site, each by charger id.
    async fn evses_of_sites(&self, site_ids: &[i64]) -> Result<HashMap<i64, Vec<EvseFacts>>> {
        if site_ids.is_empty() {
            return Ok(HashMap::new());
        }
        let list: Vec<String> = (1..=site_ids.len()).map(|i| format!("${i}")).collect();
        let list = list.join(", ");
        let chargers_sql = self.chargers_sql(&format!("ch.site_id IN ({list})"));
        let mut chargers = sqlx::query_as::<_, ChargerRow>(&chargers_sql);
        let in_sites =
            format!("k.charger_id IN (SELECT id FROM chargers WHERE site_id IN ({list}))");
        let connectors_sql = connectors_sql(&in_sites);
        let mut connectors = sqlx::query_as::<_, ConnectorRow>(&connectors_sql);
        for id in site_ids {
            chargers = chargers.bind(id);
            connectors = connectors.bind(id);
        }
        let chargers = chargers.fetch_all(self.db()).await?;
        let mut by_charger: HashMap<i64, Vec<ConnectorRow>> = HashMap::new();
        for connector in connectors.fetch_all(self.db()).await? {
            by_charger
                .entry(connector.charger_id)
                .or_default()
                .push(connector);
        }
        let mut by_site: HashMap<i64, Vec<EvseFacts>> = HashMap::new();
        for charger in chargers {
            let connectors = by_charger.remove(&charger.id).unwrap_or_default();
            let site = charger.site_id;
            by_site
                .entry(site)
                .or_default()
                .push(evse_facts(charger, connectors));
        }
        Ok(by_site)
    }

    fn chargers_sql(&self, filter: &str) -> String {
        let g = self.greatest();
        format!(
            "SELECT ch.id, ch.uuid, ch.site_id, ch.identity, ch.reference, ch.connection_status,
               ch.status, ch.max_current, {g}(ch.created_at, COALESCE(ch.last_connection_at, ''),
                 COALESCE(ch.last_disconnection_at, '')) AS changed_at
             FROM chargers ch WHERE {filter} ORDER BY ch.id"
        )
    }

    /// The status of the charger's EVSE at the site as last pushed to the provider (by an
    /// EVSE's push or in its Location's), unless that push failed for good: `None` when
    /// nothing was, so the next status is pushed whatever it is.
    pub async fn ocpi_last_pushed_evse_status(
        &self,
        provider_id: i64,
        site_uuid: &str,
        charger_uuid: &str,
    ) -> Result<Option<String>> {
        let evse_path = format!("%/{site_uuid}/{charger_uuid}");
        let location_path = format!("%/{site_uuid}");
        let last: Option<(String, String, Option<String>)> = sqlx::query_as(
            "SELECT state, path, body FROM ocpi_pushes
             WHERE provider_id = $1 AND object_key = $2 AND (path LIKE $3 OR path LIKE $4)
             ORDER BY id DESC LIMIT 1",
        )
        .bind(provider_id)
        .bind(format!("location:{site_uuid}"))
        .bind(&evse_path)
        .bind(&location_path)
        .fetch_optional(self.db())
        .await?;
        let Some((state, path, Some(body))) = last else {
            return Ok(None);
        };
        if state == "failed" {
            return Ok(None);
        }
        let body: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let status = if path.ends_with(&format!("/{charger_uuid}")) {
            body["status"].as_str().map(str::to_string)
        } else {
            (body["evses"].as_array())
                .and_then(|evses| evses.iter().find(|e| e["uid"] == charger_uuid))
                .and_then(|e| e["status"].as_str().map(str::to_string))
        };
        Ok(status)
    }
}

fn connectors_sql(filter: &str) -> String {
    format!(
        "SELECT k.charger_id, k.connector_id, k.status, k.standard, k.format, k.power_type,
           k.max_voltage, k.max_amperage, k.updated_at
         FROM connectors k WHERE {filter} ORDER BY k.charger_id, k.connector_id"
    )
}

fn evse_facts(charger: ChargerRow, connectors: Vec<ConnectorRow>) -> EvseFacts {
    let last_updated = (connectors.iter())
        .map(|c| c.updated_at.as_str())
        .chain([charger.changed_at.as_str()])
        .max()
        .unwrap_or_default()
        .to_string();
    EvseFacts {
        uuid: charger.uuid,
        identity: charger.identity,
        reference: charger.reference,
        connection_status: charger.connection_status,
        charger_status: charger.status,
        max_current: charger.max_current,
        connectors: (connectors.into_iter())
            .map(|c| ConnectorFacts {
                connector_id: c.connector_id,
                status: c.status,
                standard: c.standard,
                format: c.format,
                power_type: c.power_type,
                max_voltage: c.max_voltage,
                max_amperage: c.max_amperage,
                updated_at: c.updated_at,
            })
            .collect(),
        last_updated,
    }
}
