//! Events turned into EVSE pushes against a real store, on SQLite and PostgreSQL.

use super::pushes;
use cms_store::ocpi::locations::NewSiteRoaming;
use cms_store::ocpi::parties::{Party, PartyConnection};
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};
use cms_store::providers::NewProvider;
use cms_store::sites::SiteAddress;
use cms_store::{NewCharger, StateChange, Store, now_record_time};
use serde_json::{Value, json};

/// A store on each backend (PostgreSQL when `CMS_TEST_POSTGRES_URL` is set).
async fn stores() -> Vec<(Store, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let mut stores = vec![(Store::open(dir.path()).await.unwrap(), Some(dir))];
    if let Some(url) = cms_store::testing::postgres_url() {
        let url = cms_store::testing::fresh_schema(&url).await.unwrap();
        stores.push((Store::open_url(&url).await.unwrap(), None));
    }
    stores
}

/// A team NL/CMS with sites A (published to EMP) and B, providers EMP and OTH registered
/// with a locations RECEIVER, and the charger CP-1 at A.
struct World {
    store: Store,
    emp: Party,
    oth: Party,
    sites: [(String, i64); 2],
    charger: (String, i64),
}

async fn world(store: Store) -> World {
    let owner = store
        .ensure_user_in("cpo@example.com", false)
        .await
        .unwrap();
    let team = owner.personal_team_id;
    store
        .ocpi_save_cpo(team, "NL", "CMS", "Charging Co", None)
        .await
        .unwrap();
    let mut parties = Vec::new();
    for code in ["EMP", "OTH"] {
        let new = NewProvider {
            name: code.into(),
            country_code: "NL".into(),
            party_id: code.into(),
            tariff_id: None,
        };
        let provider = store.create_provider(team, &new).await.unwrap();
        let endpoints = json!([{"identifier": "locations", "role": "RECEIVER", "url": "http://emsp/locations"}]);
        let connection = PartyConnection {
            incoming_token_hash: format!("hash-{code}"),
            outgoing_token: Some("token".into()),
            status: "registered".into(),
            versions_url: None,
            endpoints: Some(endpoints.to_string()),
            roles: None,
        };
        store
            .ocpi_save_party(provider.id, &connection)
            .await
            .unwrap();
        parties.push(
            store
                .ocpi_party_of_provider(provider.id)
                .await
                .unwrap()
                .unwrap(),
        );
    }
    let mut sites = Vec::new();
    for name in ["A", "B"] {
        let address = SiteAddress {
            name: name.into(),
            street: "Stationsplein".into(),
            house_number: 1,
            house_number_addition: None,
            postal_code: "1012 AB".into(),
            city: "Amsterdam".into(),
            country: "NL".into(),
        };
        let uuid = store.create_site(team, &address).await.unwrap();
        let site = store
            .site_visible_to(owner.id, &uuid)
            .await
            .unwrap()
            .unwrap();
        sites.push((uuid, site.id));
    }
    let roaming = NewSiteRoaming {
        latitude: "52.37403".into(),
        longitude: "4.88969".into(),
        parking_type: None,
        facilities: vec![],
        opening_times: None,
        provider_ids: vec![parties[0].provider_id],
    };
    store
        .ocpi_save_site_roaming(sites[0].1, &roaming)
        .await
        .unwrap();
    let new = NewCharger {
        identity: "CP-1".into(),
        site_uuid: Some(sites[0].0.clone()),
        ..Default::default()
    };
    let uuid = store.add_charger(&new).await.unwrap();
    let charger = store
        .charger_visible_to(owner.id, &uuid)
        .await
        .unwrap()
        .unwrap();
    let oth = parties.pop().unwrap();
    let emp = parties.pop().unwrap();
    World {
        store,
        emp,
        oth,
        sites: [sites[0].clone(), sites[1].clone()],
        charger: (uuid, charger.id),
    }
}

impl World {
    fn event(&self, event_type: &str, site: i64) -> OutboxEvent {
        OutboxEvent {
            seq: 1,
            event_type: event_type.into(),
            subject: "CP-1".into(),
            team_id: None,
            site_id: Some(site),
            charger_id: Some(self.charger.1),
            data: json!({}),
            occurred_at: now_record_time(),
        }
    }

    /// The pushes of `event_type` at site A for EMP, enqueued as the dispatcher would.
    async fn told(&self, event_type: &str) -> Vec<NewPush> {
        let event = self.event(event_type, self.sites[0].1);
        let made = pushes(&self.store, &event, &self.emp).await.unwrap();
        self.store.enqueue_ocpi_pushes(&made).await.unwrap();
        made
    }

    async fn apply(&self, change: StateChange) {
        self.store.apply(&[change]).await.unwrap();
    }
}

fn status(connector: i64, status: &str) -> StateChange {
    StateChange::Status {
        identity: "CP-1".into(),
        connector_id: connector,
        status: status.into(),
        error: "NoError".into(),
        info: None,
        vendor_id: None,
        vendor_error_code: None,
        at: now_record_time(),
    }
}

fn body(push: &NewPush) -> Value {
    serde_json::from_str(push.body.as_deref().unwrap_or("null")).unwrap()
}

#[tokio::test]
async fn status_events_patch_the_evse_when_its_ocpi_status_changes() {
    for (store, _dir) in stores().await {
        let w = world(store).await;
        let (site, _) = &w.sites[0];
        let evse_path = format!("/NL/CMS/{site}/{}", w.charger.0);
        w.apply(StateChange::Connected {
            identity: "CP-1".into(),
            session: "s-1".into(),
            server: "gw".into(),
            at: now_record_time(),
            ocpp_version: Some("1.6".into()),
        })
        .await;
        w.apply(status(1, "Available")).await;

        let made = w.told("connector.status_changed").await;
        assert_eq!(made.len(), 1, "{made:?}");
        let patch = &made[0];
        assert_eq!(
            (
                patch.module.as_str(),
                patch.method.as_str(),
                patch.path.as_str()
            ),
            ("locations", "PATCH", evse_path.as_str())
        );
        assert_eq!(patch.object_key, format!("location:{site}"));
        assert_eq!(patch.provider_id, w.emp.provider_id);
        assert_eq!(body(patch)["status"], "AVAILABLE");
        assert!(body(patch)["last_updated"].as_str().unwrap().ends_with('Z'));

        // The same OCPI status again: nothing (Preparing and Charging are both CHARGING).
        assert!(w.told("connector.status_changed").await.is_empty());
        w.apply(status(1, "Preparing")).await;
        assert_eq!(
            body(&w.told("connector.status_changed").await[0])["status"],
            "CHARGING"
        );
        w.apply(status(1, "Charging")).await;
        assert!(w.told("connector.status_changed").await.is_empty());

        // Offline, as cms says, whatever the store still holds; a disconnect after it is no news.
        assert_eq!(
            body(&w.told("charger.offline").await[0])["status"],
            "UNKNOWN"
        );
        w.apply(StateChange::Disconnected {
            identity: "CP-1".into(),
            session: "s-1".into(),
            at: now_record_time(),
        })
        .await;
        assert!(w.told("charger.disconnected").await.is_empty());

        // Not published to OTH; other events tell the locations module nothing.
        let event = w.event("connector.status_changed", w.sites[0].1);
        assert!(pushes(&w.store, &event, &w.oth).await.unwrap().is_empty());
        assert!(w.told("transaction.started").await.is_empty());
        let mut no_receiver = w.emp.clone();
        no_receiver.endpoints = Some("[]".into());
        assert!(
            pushes(&w.store, &event, &no_receiver)
                .await
                .unwrap()
                .is_empty()
        );
    }
}

#[tokio::test]
async fn a_charger_registered_is_put_and_one_moved_away_is_put_removed() {
    for (store, _dir) in stores().await {
        let w = world(store).await;
        let (site_a, id_a) = w.sites[0].clone();
        let evse_path = format!("/NL/CMS/{site_a}/{}", w.charger.0);
        w.apply(status(1, "Available")).await;
        w.apply(status(2, "Faulted")).await;

        let made = w.told("charger.registered").await;
        assert_eq!(made.len(), 1, "{made:?}");
        let put = &made[0];
        assert_eq!(
            (put.method.as_str(), put.path.as_str()),
            ("PUT", evse_path.as_str())
        );
        let evse = body(put);
        assert_eq!(evse["uid"], w.charger.0.as_str());
        assert_eq!(evse["evse_id"], "NL*CMS*ECP1");
        assert_eq!(evse["status"], "PLANNED", "it never connected");
        let ids: Vec<&str> = (evse["connectors"].as_array().unwrap().iter())
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["1", "2"]);

        // Moved to B (not published): A's party is told it is gone; a late event of A
        // about it tells nothing.
        let site_b = w.sites[1].0.clone();
        w.store
            .move_charger("CP-1", &site_b, 0, None)
            .await
            .unwrap();
        let event = w.event("charger.removed", id_a);
        let made = pushes(&w.store, &event, &w.emp).await.unwrap();
        assert_eq!(made.len(), 1, "{made:?}");
        assert_eq!(
            (made[0].method.as_str(), made[0].path.as_str()),
            ("PUT", evse_path.as_str())
        );
        assert_eq!(body(&made[0])["status"], "REMOVED");
        assert_eq!(made[0].object_key, format!("location:{site_a}"));
        assert!(w.told("charger.registered").await.is_empty());
        assert!(w.told("connector.status_changed").await.is_empty());
        let at_b = w.event("charger.registered", w.sites[1].1);
        assert!(pushes(&w.store, &at_b, &w.emp).await.unwrap().is_empty());
    }
}
