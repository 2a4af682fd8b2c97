//! The locations and tariffs pushes (docs/ocpi.md "Locations and tariffs"): how each is
//! addressed (the party's RECEIVER module, `/{cpo country}/{cpo party}/{id}[/{evse uid}]`,
//! ordered by `location:{site uuid}` or `tariff:{tariff uuid}`), and those that follow an
//! operator's change, enqueued at once: a site's publication changed, the site, a tariff or a
//! provider edited. Only registered parties that list the module as a RECEIVER get them.

use super::Republication;
use super::pull::Publication;
use crate::ocpi::pushes::NewPush;
use crate::{Result, Store};
use cms_ocpi::locations::{CpoFacts, Evse, EvseStatus, LocationFacts};
use cms_ocpi::tariffs::TariffFacts;
use serde_json::json;

/// `PUT` of the whole Location.
pub fn location_put(provider_id: i64, facts: &LocationFacts) -> NewPush {
    let location = cms_ocpi::locations::location(facts);
    NewPush {
        provider_id,
        object_key: format!("location:{}", location.id),
        module: "locations".into(),
        method: "PUT".into(),
        path: format!(
            "/{}/{}/{}",
            location.country_code, location.party_id, location.id
        ),
        body: Some(serde_json::to_string(&location).expect("a Location serialises")),
    }
}

/// `PUT` of one EVSE of the site `site_uuid`.
pub fn evse_put(provider_id: i64, cpo: &CpoFacts, site_uuid: &str, evse: &Evse) -> NewPush {
    NewPush {
        provider_id,
        object_key: format!("location:{site_uuid}"),
        module: "locations".into(),
        method: "PUT".into(),
        path: evse_path(cpo, site_uuid, &evse.uid),
        body: Some(serde_json::to_string(evse).expect("an EVSE serialises")),
    }
}

/// `PATCH` of an EVSE's status (`last_updated` in OCPI's form).
pub fn evse_status_patch(
    provider_id: i64,
    cpo: &CpoFacts,
    site_uuid: &str,
    evse_uid: &str,
    status: EvseStatus,
    last_updated: &str,
) -> NewPush {
    NewPush {
        provider_id,
        object_key: format!("location:{site_uuid}"),
        module: "locations".into(),
        method: "PATCH".into(),
        path: evse_path(cpo, site_uuid, evse_uid),
        body: Some(json!({"status": status, "last_updated": last_updated}).to_string()),
    }
}

/// `PUT` of a Tariff.
pub fn tariff_put(provider_id: i64, cpo: &CpoFacts, facts: &TariffFacts) -> NewPush {
    let tariff = cms_ocpi::tariffs::tariff(&cpo.country_code, &cpo.party_id, facts);
    NewPush {
        provider_id,
        object_key: format!("tariff:{}", facts.uuid),
        module: "tariffs".into(),
        method: "PUT".into(),
        path: format!("/{}/{}/{}", cpo.country_code, cpo.party_id, facts.uuid),
        body: Some(serde_json::to_string(&tariff).expect("a Tariff serialises")),
    }
}

fn evse_path(cpo: &CpoFacts, site_uuid: &str, evse_uid: &str) -> String {
    format!(
        "/{}/{}/{site_uuid}/{evse_uid}",
        cpo.country_code, cpo.party_id
    )
}

/// Which of a party's RECEIVER modules the provider can be pushed to: (locations, tariffs).
async fn receives(store: &Store, provider_id: i64) -> Result<(bool, bool)> {
    let party = store.ocpi_party_of_provider(provider_id).await?;
    Ok(match party.filter(|p| p.is_registered()) {
        Some(p) => (
            p.endpoint("locations", "RECEIVER").is_some(),
            p.endpoint("tariffs", "RECEIVER").is_some(),
        ),
        None => (false, false),
    })
}

impl Store {
    /// The team's CPO identity as the objects it publishes carry it.
    pub async fn ocpi_cpo_facts(&self, team_id: i64) -> Result<Option<CpoFacts>> {
        Ok(self.ocpi_cpo(team_id).await?.map(|cpo| CpoFacts {
            country_code: cpo.country_code,
            party_id: cpo.party_id,
            name: cpo.name,
            website: cpo.website,
        }))
    }

    /// After the site's roaming settings were written: its Location (and the tariff pricing
    /// the party's drivers there) to every party it is published to, and each of its EVSEs
    /// `REMOVED` to every party it no longer is.
    pub async fn ocpi_push_publication(&self, site_id: i64, change: &Republication) -> Result<()> {
        let mut pushes = Vec::new();
        for provider in &change.published {
            pushes.extend(self.site_pushes(*provider, site_id).await?);
        }
        if !change.unpublished.is_empty() {
            let site: Option<(String, i64)> =
                sqlx::query_as("SELECT uuid, team_id FROM sites WHERE id = $1")
                    .bind(site_id)
                    .fetch_optional(self.db())
                    .await?;
            let cpo = match &site {
                Some((_, team)) => self.ocpi_cpo_facts(*team).await?,
                None => None,
            };
            if let (Some((site_uuid, _)), Some(cpo)) = (site, cpo) {
                let evses = self.ocpi_site_evses(site_id).await?;
                let now = cms_ocpi::time::format(chrono::Utc::now());
                for provider in &change.unpublished {
                    if !receives(self, *provider).await?.0 {
                        continue;
                    }
                    for evse in &evses {
                        pushes.push(evse_status_patch(
                            *provider,
                            &cpo,
                            &site_uuid,
                            &evse.uuid,
                            EvseStatus::Removed,
                            &now,
                        ));
                    }
                }
            }
        }
        self.enqueue_ocpi_pushes(&pushes).await
    }

    /// After the site was edited (its name, address, tariff, ...): its Location and tariff to
    /// every party it is published to.
    pub async fn ocpi_push_site(&self, site_id: i64) -> Result<()> {
        let mut pushes = Vec::new();
        for provider in self.ocpi_site_publications(site_id).await? {
            pushes.extend(self.site_pushes(provider, site_id).await?);
        }
        self.enqueue_ocpi_pushes(&pushes).await
    }

    /// After a tariff was edited: it to every party whose drivers it prices at a site
    /// published to it.
    pub async fn ocpi_push_tariff(&self, tariff_uuid: &str) -> Result<()> {
        let mut pushes = Vec::new();
        for provider in self.ocpi_providers_priced_by(tariff_uuid).await? {
            if !receives(self, provider).await?.1 {
                continue;
            }
            let party = self.ocpi_party_of_provider(provider).await?;
            let cpo = match party {
                Some(party) => self.ocpi_cpo_facts(party.team_id).await?,
                None => None,
            };
            let facts = self.ocpi_tariff(provider, tariff_uuid).await?;
            if let (Some(cpo), Some(facts)) = (cpo, facts) {
                pushes.push(tariff_put(provider, &cpo, &facts));
            }
        }
        self.enqueue_ocpi_pushes(&pushes).await
    }

    /// After a provider was edited (its own tariff): every site published to it, with the
    /// tariff that now prices its drivers there.
    pub async fn ocpi_push_provider(&self, provider_id: i64) -> Result<()> {
        let mut pushes = Vec::new();
        for site in self.ocpi_provider_sites(provider_id).await? {
            for push in self.site_pushes(provider_id, site).await? {
                if !pushes.contains(&push) {
                    pushes.push(push);
                }
            }
        }
        self.enqueue_ocpi_pushes(&pushes).await
    }

    /// The site's Location and its tariff for the provider's party, if it is published to it
    /// and the party takes them.
    async fn site_pushes(&self, provider_id: i64, site_id: i64) -> Result<Vec<NewPush>> {
        let (locations, tariffs) = receives(self, provider_id).await?;
        let Some(Publication {
            site_uuid,
            cpo,
            tariff_uuid,
        }) = self.ocpi_publication(provider_id, site_id).await?
        else {
            return Ok(Vec::new());
        };
        // The tariff first: the Location's connectors name it.
        let mut pushes = Vec::new();
        if tariffs
            && let Some(uuid) = tariff_uuid
            && let Some(facts) = self.ocpi_tariff(provider_id, &uuid).await?
        {
            pushes.push(tariff_put(provider_id, &cpo, &facts));
        }
        if locations && let Some(facts) = self.ocpi_location(provider_id, &site_uuid).await? {
            pushes.push(location_put(provider_id, &facts));
        }
        Ok(pushes)
    }
}

impl Store {
    /// The pushes of one object (`location:{site uuid}`, `tariff:{uuid}`) to the provider's
    /// party, oldest first, whatever their state.
    pub async fn ocpi_object_pushes(
        &self,
        provider_id: i64,
        object_key: &str,
    ) -> Result<Vec<NewPush>> {
        let rows: Vec<(String, String, String, Option<String>)> = sqlx::query_as(
            "SELECT module, method, path, body FROM ocpi_pushes
             WHERE provider_id = $1 AND object_key = $2 ORDER BY id",
        )
        .bind(provider_id)
        .bind(object_key)
        .fetch_all(self.db())
        .await?;
        Ok((rows.into_iter())
            .map(|(module, method, path, body)| NewPush {
                provider_id,
                object_key: object_key.to_string(),
                module,
                method,
                path,
                body,
            })
            .collect())
    }
}
