//! A 2.0.1 station's prices: what the gateways learn of them through the registry's change log.

use crate::device_model::{ACTUAL, ReportedVariable, VariableName};
use crate::tariffs::NewTariff;
use crate::test_support::store_test;
use crate::{NewCharger, StateChange, Store};

/// The station's registration as the last change of the log says: its shown tariff, and how
/// many changes the log holds for it.
async fn shown_tariff(store: &Store, identity: &str) -> (Option<String>, usize) {
    let changes = store.registry_changes_since(0, 10_000).await.unwrap();
    let of_it: Vec<_> = changes.iter().filter(|c| c.identity == identity).collect();
    let last = of_it.last().and_then(|c| c.registration.as_ref());
    (last.and_then(|r| r.shown_tariff.clone()), of_it.len())
}

/// The station's report of TariffCostCtrlr's `Enabled` for tariffs.
fn tariff_enabled(value: &str) -> StateChange {
    let variable = ReportedVariable {
        name: VariableName {
            component: "TariffCostCtrlr".into(),
            variable: "Enabled".into(),
            variable_instance: Some("Tariff".into()),
            attribute_type: ACTUAL.into(),
            ..Default::default()
        },
        value: Some(value.into()),
        mutability: "ReadWrite".into(),
        ..Default::default()
    };
    StateChange::DeviceModelReported {
        identity: "CS-PRICE".into(),
        variables: vec![variable],
        ended_request: None,
        at: "2026-11-21T10:00:00.000000Z".into(),
    }
}

store_test!(
    a_station_shows_its_sites_tariff_only_while_everything_says_so,
    |store| {
        use crate::sites::SiteAddress;
        let owner = store.ensure_user_in("owner@example.com", false).await;
        let team = owner.unwrap().personal_team_id;
        let address = SiteAddress {
            name: "Depot".into(),
            street: "Stationsplein".into(),
            house_number: 1,
            house_number_addition: None,
            postal_code: "1012 AB".into(),
            city: "Amsterdam".into(),
            country: "NL".into(),
        };
        let site = store.create_site(team, &address).await.unwrap();
        let new = NewCharger {
            identity: "CS-PRICE".into(),
            site_uuid: Some(site.clone()),
            ..Default::default()
        };
        store.add_charger(&new).await.unwrap();
        let charger: i64 =
            sqlx::query_scalar("SELECT id FROM chargers WHERE identity = 'CS-PRICE'")
                .fetch_one(&store.pool)
                .await
                .unwrap();
        store
            .set_charger_licenses(charger, None, Some(true))
            .await
            .unwrap();
        let tariff = NewTariff {
            name: "Energy".into(),
            currency: "EUR".into(),
            body: r#"{"currency":"EUR","elements":[]}"#.into(),
        };
        let tariff = store.create_tariff(team, &tariff).await.unwrap();
        sqlx::query("UPDATE sites SET tariff_id = $1 WHERE uuid = $2")
            .bind(tariff.id)
            .bind(&site)
            .execute(&store.pool)
            .await
            .unwrap();
        store.apply(&[tariff_enabled("true")]).await.unwrap();
        let (shown, before) = shown_tariff(&store, "CS-PRICE").await;
        assert_eq!(shown, None, "the site does not show prices");

        sqlx::query("UPDATE sites SET show_prices = 1 WHERE uuid = $1")
            .bind(&site)
            .execute(&store.pool)
            .await
            .unwrap();
        let (shown, after) = shown_tariff(&store, "CS-PRICE").await;
        assert!(after > before, "the change is logged");
        assert_eq!(
            shown.as_deref(),
            Some(r#"{"currency":"EUR","elements":[]}"#)
        );

        // An edit of the tariff reaches the gateways.
        let edited = r#"{"currency":"EUR","elements":[],"min_price":null}"#;
        sqlx::query("UPDATE tariffs SET body = $1 WHERE id = $2")
            .bind(edited)
            .bind(tariff.id)
            .execute(&store.pool)
            .await
            .unwrap();
        assert_eq!(
            shown_tariff(&store, "CS-PRICE").await.0.as_deref(),
            Some(edited)
        );

        // The station turned tariffs off: nothing to show.
        store.apply(&[tariff_enabled("false")]).await.unwrap();
        assert_eq!(shown_tariff(&store, "CS-PRICE").await.0, None);
        store.apply(&[tariff_enabled("true")]).await.unwrap();
        assert!(shown_tariff(&store, "CS-PRICE").await.0.is_some());

        // A provider of the owner with a tariff of its own may price a driver at an
        // `id_tags` site: the gateway cannot tell, and tells no price there.
        let provider = crate::providers::NewProvider {
            name: "Roaming".into(),
            country_code: "NL".into(),
            party_id: "RMG".into(),
            tariff_id: None,
        };
        let provider = store.create_provider(team, &provider).await.unwrap();
        sqlx::query("UPDATE sites SET authorization_mode = 'id_tags' WHERE uuid = $1")
            .bind(&site)
            .execute(&store.pool)
            .await
            .unwrap();
        assert!(
            shown_tariff(&store, "CS-PRICE").await.0.is_some(),
            "no own tariff"
        );
        sqlx::query("UPDATE providers SET tariff_id = $1 WHERE uuid = $2")
            .bind(tariff.id)
            .bind(&provider.uuid)
            .execute(&store.pool)
            .await
            .unwrap();
        assert_eq!(shown_tariff(&store, "CS-PRICE").await.0, None);
        sqlx::query("UPDATE sites SET authorization_mode = 'open' WHERE uuid = $1")
            .bind(&site)
            .execute(&store.pool)
            .await
            .unwrap();
        assert!(
            shown_tariff(&store, "CS-PRICE").await.0.is_some(),
            "an open site"
        );

        // Without the `pro` licence, none either.
        store
            .set_charger_licenses(charger, None, Some(false))
            .await
            .unwrap();
        assert_eq!(shown_tariff(&store, "CS-PRICE").await.0, None);
    }
);
