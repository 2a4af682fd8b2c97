use super::*;
use crate::Quotas;
use crate::id_tags::IdTagFields;
use crate::ocpi::parties::PartyConnection;
use crate::ocpi::token_hash;
use crate::providers::{NewProvider, Provider};
use crate::test_support::store_test;

async fn provider(store: &Store) -> Provider {
    let team = store
        .ensure_user_in("owner@example.com", false)
        .await
        .unwrap()
        .personal_team_id;
    let new = NewProvider {
        name: "Roam".into(),
        country_code: "NL".into(),
        party_id: "EMP".into(),
        tariff_id: None,
    };
    store.create_provider(team, &new).await.unwrap()
}

fn write(uid: &str, whitelist: &str, valid: bool) -> TokenWrite {
    TokenWrite {
        uid: uid.into(),
        token_type: "RFID".into(),
        body: format!(r#"{{"uid":"{uid}","whitelist":"{whitelist}","valid":{valid}}}"#),
        whitelist: whitelist.into(),
        valid,
        last_updated: "2026-03-01T10:00:00Z".into(),
        group_id: Some("FLEET-1".into()),
    }
}

/// The last change the id tags' log holds for `key` of `team`.
async fn last_change(store: &Store, team: i64, key: &str) -> crate::IdTagChange {
    let changes = store.id_tag_changes_since(0, 1_000).await.unwrap();
    let change = changes
        .into_iter()
        .rev()
        .find(|c| c.team_id == team && c.id_tag_key == key);
    change.unwrap_or_else(|| panic!("no change of {team}/{key:?}"))
}

store_test!(
    a_token_is_kept_as_pushed_and_is_its_providers_id_tag,
    |store| {
        let provider = provider(&store).await;
        let team = provider.id_tag_team_id;
        store
            .ocpi_put_token(provider.id, &write("04ab", "ALWAYS", true))
            .await
            .unwrap();
        let stored = store.ocpi_token(provider.id, "04AB", "RFID").await.unwrap();
        let stored = stored.expect("found in any case");
        assert_eq!((stored.uid.as_str(), stored.valid), ("04ab", true));
        assert!(stored.body.contains("ALWAYS"), "{}", stored.body);
        let other_type = store.ocpi_token(provider.id, "04ab", "APP_USER").await;
        assert_eq!(other_type.unwrap(), None);
        let tag = store
            .id_tag(team, "04AB")
            .await
            .unwrap()
            .expect("an id tag");
        assert_eq!(
            (tag.id_tag.as_str(), tag.status.as_str()),
            ("04ab", "Accepted")
        );
        assert_eq!(tag.parent_id_tag.as_deref(), Some("FLEET-1"));
        let logged = last_change(&store, team, "04AB").await.tag.expect("a tag");
        assert_eq!(logged.ocpi_type.as_deref(), Some("RFID"));
        assert_eq!(logged.ocpi_whitelist.as_deref(), Some("ALWAYS"));

        // Replaced: invalid now, and real-time only; still one tag, Blocked.
        store
            .ocpi_put_token(provider.id, &write("04AB", "NEVER", false))
            .await
            .unwrap();
        let stored = store.ocpi_token(provider.id, "04ab", "RFID").await.unwrap();
        assert_eq!(
            stored.map(|s| (s.uid, s.valid)),
            Some(("04AB".into(), false))
        );
        let (tags, total) = store.id_tags(team, 10, 0).await.unwrap();
        assert_eq!(total, 1);
        assert_eq!(tags[0].status, "Blocked");
        let logged = last_change(&store, team, "04AB").await.tag.expect("a tag");
        assert_eq!(logged.ocpi_whitelist.as_deref(), Some("NEVER"));
        // A group too long for OCPP's parentIdTag is not the tag's parent.
        let mut long_group = write("04AB", "NEVER", false);
        long_group.group_id = Some("G".repeat(21));
        store
            .ocpi_put_token(provider.id, &long_group)
            .await
            .unwrap();
        let tag = store
            .id_tag(team, "04AB")
            .await
            .unwrap()
            .expect("an id tag");
        assert_eq!(tag.parent_id_tag, None);
    }
);

store_test!(a_new_token_counts_in_its_teams_id_tag_quota, |store| {
    let store = store.with_quotas(Quotas {
        id_tags: 1,
        ..Quotas::DEFAULT
    });
    let provider = provider(&store).await;
    store
        .ocpi_put_token(provider.id, &write("ONE", "ALWAYS", true))
        .await
        .unwrap();
    // A token replaced is no new tag; a second one is past the quota, and nothing is written.
    store
        .ocpi_put_token(provider.id, &write("one", "ALWAYS", false))
        .await
        .unwrap();
    let refused = store
        .ocpi_put_token(provider.id, &write("TWO", "ALWAYS", true))
        .await;
    assert!(
        matches!(refused, Err(StoreError::QuotaReached(_))),
        "{refused:?}"
    );
    assert_eq!(
        store.ocpi_token(provider.id, "TWO", "RFID").await.unwrap(),
        None
    );
    let tag = store.id_tag(provider.id_tag_team_id, "TWO").await.unwrap();
    assert_eq!(tag, None);
});

store_test!(
    a_partys_link_is_logged_and_unregistering_takes_its_tokens,
    |store| {
        let provider = provider(&store).await;
        let team = provider.id_tag_team_id;
        let endpoints = r#"[{"identifier":"tokens","role":"RECEIVER","url":"https://emsp/in"},
            {"identifier":"tokens","role":"SENDER","url":"https://emsp/tokens"}]"#;
        let connection = |status: &str| PartyConnection {
            incoming_token_hash: token_hash("party-calls-with"),
            outgoing_token: Some("cms-calls-with".into()),
            status: status.into(),
            versions_url: None,
            endpoints: Some(endpoints.into()),
            roles: None,
        };
        store
            .ocpi_save_party(provider.id, &connection("pending"))
            .await
            .unwrap();
        let change = last_change(&store, team, "").await;
        assert!(change.is_party() && change.tag.is_none());
        assert_eq!(change.party, None, "a pending party is not asked");
        store
            .ocpi_save_party(provider.id, &connection("registered"))
            .await
            .unwrap();
        let link = PartyLink {
            tokens_url: "https://emsp/tokens".into(),
            token: "cms-calls-with".into(),
        };
        assert_eq!(last_change(&store, team, "").await.party, Some(link));

        // Unregistered: its tokens go, the provider's other tags stay.
        store
            .ocpi_put_token(provider.id, &write("CARD-1", "ALWAYS", true))
            .await
            .unwrap();
        let own = IdTagFields::accepted("OWN-1");
        store.create_id_tag(team, &own).await.unwrap();
        assert!(store.ocpi_delete_party(provider.id).await.unwrap());
        assert_eq!(last_change(&store, team, "").await.party, None);
        assert_eq!(
            store
                .ocpi_token(provider.id, "CARD-1", "RFID")
                .await
                .unwrap(),
            None
        );
        assert_eq!(store.id_tag(team, "CARD-1").await.unwrap(), None);
        assert_eq!(last_change(&store, team, "CARD-1").await.tag, None);
        assert!(store.id_tag(team, "OWN-1").await.unwrap().is_some());
    }
);

store_test!(
    a_chargers_ocpi_location_is_part_of_its_registration,
    |store| {
        use crate::NewCharger;
        let owner = store
            .ensure_user_in("owner@example.com", false)
            .await
            .unwrap();
        let address = crate::sites::SiteAddress {
            name: "Depot".into(),
            street: "Stationsplein".into(),
            house_number: 1,
            house_number_addition: None,
            postal_code: "1012 AB".into(),
            city: "Amsterdam".into(),
            country: "NL".into(),
        };
        let site = store
            .create_site(owner.personal_team_id, &address)
            .await
            .unwrap();
        let charger = NewCharger {
            identity: "CP-1".into(),
            site_uuid: Some(site.clone()),
            ..Default::default()
        };
        store.add_charger(&charger).await.unwrap();
        let last = |changes: Vec<crate::RegistryChange>| changes.into_iter().last().unwrap();
        let open = last(store.registry_changes_since(0, 100).await.unwrap());
        assert_eq!(
            open.registration.unwrap().location,
            None,
            "an open site asks no one"
        );
        sqlx::query("UPDATE sites SET authorization_mode = 'id_tags' WHERE uuid = $1")
            .bind(&site)
            .execute(&store.pool)
            .await
            .unwrap();
        let closed = last(store.registry_changes_since(0, 100).await.unwrap());
        let location = closed.registration.unwrap().location.expect("a location");
        let charger_uuid: String =
            sqlx::query_scalar("SELECT uuid FROM chargers WHERE identity = 'CP-1'")
                .fetch_one(&store.pool)
                .await
                .unwrap();
        assert_eq!(location.site_uuid, site);
        assert_eq!(location.charger_uuid, charger_uuid);
    }
);
