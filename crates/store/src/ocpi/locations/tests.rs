//! Roaming settings, who sees which site, tariffs and the last pushed status: on both
//! backends.

use super::*;
use crate::NewCharger;
use crate::StateChange;
use crate::ocpi::pushes::NewPush;
use crate::providers::NewProvider;
use crate::sites::{SiteAddress, SiteChanges};
use crate::tariffs::NewTariff;
use crate::test_support::store_test;

/// A team with a CPO identity, its providers EMP and OTH, and its sites `names` (uuid, id).
struct Fixture {
    team: i64,
    providers: [i64; 2],
    sites: Vec<(String, i64)>,
}

async fn fixture(store: &Store, names: &[&str]) -> Fixture {
    let owner = store
        .ensure_user_in("cpo@example.com", false)
        .await
        .unwrap();
    let team = owner.personal_team_id;
    store
        .ocpi_save_cpo(team, "NL", "CMS", "Charging Co", None)
        .await
        .unwrap();
    let mut providers = [0; 2];
    for (i, party) in ["EMP", "OTH"].into_iter().enumerate() {
        let new = NewProvider {
            name: party.into(),
            country_code: "NL".into(),
            party_id: party.into(),
            tariff_id: None,
        };
        providers[i] = store.create_provider(team, &new).await.unwrap().id;
    }
    let mut sites = Vec::new();
    for name in names {
        let address = SiteAddress {
            name: name.to_string(),
            street: "Stationsplein".into(),
            house_number: 12,
            house_number_addition: None,
            postal_code: "1012 AB".into(),
            city: "Amsterdam".into(),
            country: "NL".into(),
        };
        let uuid = store.create_site(team, &address).await.unwrap();
        let id = store.site_id_by_uuid_for_tests(&uuid).await;
        sites.push((uuid, id));
    }
    Fixture {
        team,
        providers,
        sites,
    }
}

impl Store {
    async fn site_id_by_uuid_for_tests(&self, uuid: &str) -> i64 {
        sqlx::query_scalar("SELECT id FROM sites WHERE uuid = $1")
            .bind(uuid)
            .fetch_one(&self.pool)
            .await
            .unwrap()
    }
}

fn settings(providers: &[i64]) -> NewSiteRoaming {
    NewSiteRoaming {
        latitude: "52.37403".into(),
        longitude: "4.88969".into(),
        parking_type: None,
        facilities: vec!["CAFE".into()],
        opening_times: None,
        provider_ids: providers.to_vec(),
    }
}

async fn charger_at(store: &Store, site_uuid: &str, identity: &str) -> i64 {
    let new = NewCharger {
        identity: identity.into(),
        site_uuid: Some(site_uuid.into()),
        ..Default::default()
    };
    let uuid = store.add_charger(&new).await.unwrap();
    sqlx::query_scalar("SELECT id FROM chargers WHERE uuid = $1")
        .bind(uuid)
        .fetch_one(&store.pool)
        .await
        .unwrap()
}

fn status(identity: &str, connector: i64, status: &str) -> StateChange {
    StateChange::Status {
        identity: identity.into(),
        connector_id: connector,
        status: status.into(),
        error: "NoError".into(),
        info: None,
        vendor_id: None,
        vendor_error_code: None,
        at: crate::now_record_time(),
    }
}

fn connected(identity: &str) -> StateChange {
    StateChange::Connected {
        identity: identity.into(),
        session: "s-1".into(),
        server: "gw".into(),
        at: crate::now_record_time(),
        ocpp_version: Some("1.6".into()),
    }
}

store_test!(
    roaming_settings_are_kept_and_tell_who_a_site_is_no_longer_published_to,
    |store| {
        let f = fixture(&store, &["Depot"]).await;
        let site = f.sites[0].1;
        assert_eq!(store.ocpi_site_roaming(site).await.unwrap(), None);
        let [emp, oth] = f.providers;
        let done = store
            .ocpi_save_site_roaming(site, &settings(&[oth, emp, emp]))
            .await
            .unwrap();
        assert_eq!(done.published, vec![emp, oth]);
        assert!(done.unpublished.is_empty());
        let kept = store.ocpi_site_roaming(site).await.unwrap().unwrap();
        assert_eq!(kept.latitude, "52.37403");
        assert_eq!(kept.facilities, vec!["CAFE".to_string()]);
        assert_eq!(kept.provider_uuids.len(), 2);
        assert_eq!(
            store.ocpi_site_publications(site).await.unwrap(),
            vec![emp, oth]
        );

        let mut fewer = settings(&[oth]);
        fewer.parking_type = Some("ON_STREET".into());
        fewer.opening_times = Some(r#"{"twentyfourseven":true}"#.into());
        let done = store.ocpi_save_site_roaming(site, &fewer).await.unwrap();
        assert_eq!(
            done,
            Republication {
                published: vec![oth],
                unpublished: vec![emp]
            }
        );
        let kept = store.ocpi_site_roaming(site).await.unwrap().unwrap();
        assert_eq!(kept.parking_type.as_deref(), Some("ON_STREET"));
        assert_eq!(kept.provider_uuids.len(), 1);
        assert_eq!(store.ocpi_site_publications(site).await.unwrap(), vec![oth]);
    }
);

store_test!(
    a_party_sees_only_the_sites_published_to_its_provider_with_their_chargers,
    |store| {
        let f = fixture(&store, &["A", "B", "C"]).await;
        let [emp, oth] = f.providers;
        let (a, b, c) = (&f.sites[0], &f.sites[1], &f.sites[2]);
        let charger = charger_at(&store, &a.0, "CP-A1").await;
        charger_at(&store, &c.0, "CP-C1").await;
        store
            .ocpi_save_site_roaming(a.1, &settings(&[emp]))
            .await
            .unwrap();
        store
            .ocpi_save_site_roaming(b.1, &settings(&[]))
            .await
            .unwrap();
        store
            .ocpi_save_site_roaming(c.1, &settings(&[emp, oth]))
            .await
            .unwrap();
        store
            .apply(&[connected("CP-A1"), status("CP-A1", 1, "Charging")])
            .await
            .unwrap();

        let all = Window::default();
        let (emps, total) = store.ocpi_locations(emp, all, 10, 0).await.unwrap();
        assert_eq!(total, 2);
        let uuids: Vec<&str> = emps.iter().map(|l| l.site.uuid.as_str()).collect();
        assert_eq!(uuids, [a.0.as_str(), c.0.as_str()]);
        let evse = &emps[0].evses[0];
        assert_eq!(evse.identity, "CP-A1");
        assert_eq!(evse.connection_status, "online");
        assert_eq!(evse.connectors[0].status, "Charging");
        assert_eq!(emps[0].cpo.party_id, "CMS");
        assert_eq!(emps[0].site.latitude, "52.37403");
        let (page, total) = store.ocpi_locations(emp, all, 1, 1).await.unwrap();
        assert_eq!((page.len(), total), (1, 2));
        assert_eq!(page[0].site.uuid, c.0);

        let (others, _) = store.ocpi_locations(oth, all, 10, 0).await.unwrap();
        assert_eq!(others.len(), 1, "only C is published to OTH");
        assert!(store.ocpi_location(oth, &a.0).await.unwrap().is_none());
        assert!(store.ocpi_location(emp, &b.0).await.unwrap().is_none());
        assert!(store.ocpi_location(emp, &a.0).await.unwrap().is_some());
        assert!(store.ocpi_publication(oth, a.1).await.unwrap().is_none());
        let publication = store.ocpi_publication(emp, a.1).await.unwrap().unwrap();
        assert_eq!(publication.site_uuid, a.0);
        let (site, evse) = store.ocpi_charger_evse(charger).await.unwrap().unwrap();
        assert_eq!((site, evse.identity.as_str()), (a.1, "CP-A1"));

        // date_from: nothing changed since; a status change brings its site back.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let since = Window {
            from: Some(chrono::Utc::now()),
            to: None,
        };
        assert_eq!(store.ocpi_locations(emp, since, 10, 0).await.unwrap().1, 0);
        store
            .apply(&[status("CP-A1", 1, "Finishing")])
            .await
            .unwrap();
        let (changed, total) = store.ocpi_locations(emp, since, 10, 0).await.unwrap();
        assert_eq!((changed[0].site.uuid.as_str(), total), (a.0.as_str(), 1));
        let before = Window {
            from: None,
            to: since.from,
        };
        assert_eq!(store.ocpi_locations(emp, before, 10, 0).await.unwrap().1, 1);

        // Without a CPO identity the team publishes nothing.
        sqlx::query("DELETE FROM ocpi_cpo WHERE team_id = $1")
            .bind(f.team)
            .execute(&store.pool)
            .await
            .unwrap();
        assert_eq!(store.ocpi_locations(emp, all, 10, 0).await.unwrap().1, 0);
    }
);

store_test!(
    a_partys_tariffs_are_its_providers_own_else_those_of_its_sites,
    |store| {
        let f = fixture(&store, &["A", "B"]).await;
        let [emp, oth] = f.providers;
        let tariff = |name: &str| NewTariff {
            name: name.into(),
            currency: "EUR".into(),
            body: r#"{"currency":"EUR","elements":[]}"#.into(),
        };
        let site_tariff = store.create_tariff(f.team, &tariff("Site")).await.unwrap();
        let own = store.create_tariff(f.team, &tariff("Own")).await.unwrap();
        for (_, site) in &f.sites {
            let changes = SiteChanges {
                tariff_id: Some(Some(site_tariff.id)),
                ..Default::default()
            };
            store.update_site(*site, changes).await.unwrap();
        }
        store
            .ocpi_save_site_roaming(f.sites[0].1, &settings(&[emp, oth]))
            .await
            .unwrap();
        store
            .ocpi_save_site_roaming(f.sites[1].1, &settings(&[emp]))
            .await
            .unwrap();
        let all = Window::default();
        let (tariffs, total) = store.ocpi_tariffs(emp, all, 10, 0).await.unwrap();
        assert_eq!(total, 1, "one tariff however many sites it prices");
        assert_eq!(tariffs[0].uuid, site_tariff.uuid);
        assert_eq!(tariffs[0].name, "Site");

        let with_own = NewProvider {
            name: "OTH".into(),
            country_code: "NL".into(),
            party_id: "OTH".into(),
            tariff_id: Some(own.id),
        };
        let oth_uuid: String = sqlx::query_scalar("SELECT uuid FROM providers WHERE id = $1")
            .bind(oth)
            .fetch_one(&store.pool)
            .await
            .unwrap();
        store
            .replace_provider(f.team, &oth_uuid, &with_own)
            .await
            .unwrap();
        let (tariffs, _) = store.ocpi_tariffs(oth, all, 10, 0).await.unwrap();
        let uuids: Vec<&str> = tariffs.iter().map(|t| t.uuid.as_str()).collect();
        assert_eq!(uuids, [own.uuid.as_str()]);
        let location = store
            .ocpi_location(oth, &f.sites[0].0)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(location.tariff_uuid, Some(own.uuid.clone()));
        assert_eq!(
            store.ocpi_providers_priced_by(&own.uuid).await.unwrap(),
            vec![oth]
        );
        assert_eq!(
            store
                .ocpi_providers_priced_by(&site_tariff.uuid)
                .await
                .unwrap(),
            vec![emp]
        );
        assert!(store.ocpi_tariff(emp, &own.uuid).await.unwrap().is_none());
        assert!(store.ocpi_tariff(oth, &own.uuid).await.unwrap().is_some());
        assert_eq!(
            store.ocpi_provider_sites(emp).await.unwrap(),
            vec![f.sites[0].1, f.sites[1].1]
        );
    }
);

store_test!(
    the_evse_status_last_pushed_is_read_from_the_outbox,
    |store| {
        let f = fixture(&store, &["A"]).await;
        let [emp, _] = f.providers;
        let site = f.sites[0].0.clone();
        let push = |path: String, body: serde_json::Value| NewPush {
            provider_id: emp,
            object_key: format!("location:{site}"),
            module: "locations".into(),
            method: "PUT".into(),
            path,
            body: Some(body.to_string()),
        };
        let last = || store.ocpi_last_pushed_evse_status(emp, &site, "ch-1");
        assert_eq!(last().await.unwrap(), None);
        let location = serde_json::json!({"id": site, "evses": [
            {"uid": "ch-0", "status": "CHARGING"}, {"uid": "ch-1", "status": "AVAILABLE"}]});
        store
            .enqueue_ocpi_pushes(&[push(format!("/NL/CMS/{site}"), location)])
            .await
            .unwrap();
        assert_eq!(last().await.unwrap().as_deref(), Some("AVAILABLE"));
        let patch =
            serde_json::json!({"status": "CHARGING", "last_updated": "2026-11-29T10:00:00Z"});
        let other =
            serde_json::json!({"status": "OUTOFORDER", "last_updated": "2026-11-29T10:00:00Z"});
        store
            .enqueue_ocpi_pushes(&[
                push(format!("/NL/CMS/{site}/ch-1"), patch),
                push(format!("/NL/CMS/{site}/ch-0"), other),
            ])
            .await
            .unwrap();
        assert_eq!(last().await.unwrap().as_deref(), Some("CHARGING"));
        sqlx::query("UPDATE ocpi_pushes SET state = 'failed' WHERE path LIKE '%/ch-1'")
            .execute(&store.pool)
            .await
            .unwrap();
        assert_eq!(last().await.unwrap(), None, "a failed push is pushed again");
    }
);

/// The outbox as (provider, object_key, module, method, path, body), oldest first.
async fn outbox(store: &Store) -> Vec<(i64, String, String, String, String, serde_json::Value)> {
    let rows: Vec<(i64, String, String, String, String, Option<String>)> = sqlx::query_as(
        "SELECT provider_id, object_key, module, method, path, body FROM ocpi_pushes ORDER BY id",
    )
    .fetch_all(&store.pool)
    .await
    .unwrap();
    (rows.into_iter())
        .map(|(p, k, m, verb, path, body)| {
            let body = serde_json::from_str(&body.unwrap_or_default()).unwrap_or_default();
            (p, k, m, verb, path, body)
        })
        .collect()
}

async fn register(store: &Store, provider: i64, modules: &[&str]) {
    let endpoints: Vec<serde_json::Value> = (modules.iter())
        .map(|m| serde_json::json!({"identifier": m, "role": "RECEIVER", "url": format!("http://emsp/{m}")}))
        .collect();
    let connection = crate::ocpi::parties::PartyConnection {
        incoming_token_hash: format!("hash-{provider}"),
        outgoing_token: Some("token".into()),
        status: "registered".into(),
        versions_url: Some("http://emsp/versions".into()),
        endpoints: Some(serde_json::to_string(&endpoints).unwrap()),
        roles: None,
    };
    store.ocpi_save_party(provider, &connection).await.unwrap();
}

store_test!(
    publishing_and_editing_enqueue_pushes_for_the_registered_parties_that_take_them,
    |store| {
        let f = fixture(&store, &["A"]).await;
        let [emp, oth] = f.providers;
        let (site_uuid, site) = f.sites[0].clone();
        register(&store, emp, &["locations", "tariffs"]).await;
        // OTH takes tariffs only: no Location is pushed to it.
        register(&store, oth, &["tariffs"]).await;
        let tariff = NewTariff {
            name: "Standard".into(),
            currency: "EUR".into(),
            body: r#"{"currency":"EUR","elements":[{"price_components":[{"type":"ENERGY","price":"0.30","vat":21,"step_size":1}]}]}"#.into(),
        };
        let tariff = store.create_tariff(f.team, &tariff).await.unwrap();
        let changes = SiteChanges {
            tariff_id: Some(Some(tariff.id)),
            ..Default::default()
        };
        store.update_site(site, changes).await.unwrap();
        let charger = charger_at(&store, &site_uuid, "CP-1").await;
        let charger_uuid: String = sqlx::query_scalar("SELECT uuid FROM chargers WHERE id = $1")
            .bind(charger)
            .fetch_one(&store.pool)
            .await
            .unwrap();

        let change = store
            .ocpi_save_site_roaming(site, &settings(&[emp, oth]))
            .await
            .unwrap();
        store.ocpi_push_publication(site, &change).await.unwrap();
        let pushed = outbox(&store).await;
        let summary: Vec<(i64, &str, &str, &str)> = (pushed.iter())
            .map(|(p, k, m, verb, _, _)| (*p, k.as_str(), m.as_str(), verb.as_str()))
            .collect();
        let location_key = format!("location:{site_uuid}");
        let tariff_key = format!("tariff:{}", tariff.uuid);
        assert_eq!(
            summary,
            [
                (emp, tariff_key.as_str(), "tariffs", "PUT"),
                (emp, location_key.as_str(), "locations", "PUT"),
                (oth, tariff_key.as_str(), "tariffs", "PUT"),
            ]
        );
        let (_, _, _, _, path, location) = &pushed[1];
        assert_eq!(path, &format!("/NL/CMS/{site_uuid}"));
        assert_eq!(location["id"], site_uuid.as_str());
        assert_eq!(location["evses"][0]["uid"], charger_uuid.as_str());
        assert_eq!(location["evses"][0]["status"], "PLANNED");
        assert_eq!(
            location["evses"][0]["connectors"][0]["tariff_ids"][0],
            tariff.uuid.as_str()
        );
        let (_, _, _, _, path, body) = &pushed[0];
        assert_eq!(path, &format!("/NL/CMS/{}", tariff.uuid));
        assert_eq!(
            body["elements"][0]["price_components"][0]["price"].as_f64(),
            Some(0.3)
        );

        // Unpublished from EMP: its EVSE REMOVED there.
        let change = store
            .ocpi_save_site_roaming(site, &settings(&[oth]))
            .await
            .unwrap();
        store.ocpi_push_publication(site, &change).await.unwrap();
        let pushed = outbox(&store).await;
        let (provider, key, _, verb, path, body) = &pushed[4];
        assert_eq!(
            (*provider, key.as_str(), verb.as_str()),
            (emp, location_key.as_str(), "PATCH")
        );
        assert_eq!(path, &format!("/NL/CMS/{site_uuid}/{charger_uuid}"));
        assert_eq!(body["status"], "REMOVED");
        assert!(body["last_updated"].is_string());
        assert_eq!(
            pushed.len(),
            5,
            "OTH is pushed its tariff again, nothing else"
        );

        // Edits reach whoever the site is published to.
        store.ocpi_push_tariff(&tariff.uuid).await.unwrap();
        store.ocpi_push_site(site).await.unwrap();
        store.ocpi_push_provider(oth).await.unwrap();
        let pushed = outbox(&store).await;
        let later: Vec<(i64, &str)> = (pushed[5..].iter())
            .map(|(p, _, m, _, _, _)| (*p, m.as_str()))
            .collect();
        assert_eq!(
            later,
            [(oth, "tariffs"), (oth, "tariffs"), (oth, "tariffs")]
        );
        store.ocpi_push_provider(emp).await.unwrap();
        assert_eq!(
            outbox(&store).await.len(),
            8,
            "nothing is published to EMP any more"
        );
    }
);
