use super::*;
use crate::NewCharger;
use crate::sites::SiteAddress;
use crate::test_support::store_test;

/// A site of a new user's personal team with chargers `identities`; returns the owner's team,
/// the site's id and the chargers' `(uuid, id)` by identity.
async fn site_with(
    store: &Store,
    email: &str,
    identities: &[&str],
) -> (i64, i64, Vec<(String, i64)>) {
    let owner = store.ensure_user_in(email, false).await.unwrap();
    let address = SiteAddress {
        name: "Depot".into(),
        street: "Stationsplein".into(),
        house_number: 12,
        house_number_addition: None,
        postal_code: "1012 AB".into(),
        city: "Amsterdam".into(),
        country: "NL".into(),
    };
    let team = owner.personal_team_id;
    let uuid = store.create_site(team, &address).await.unwrap();
    let site = store
        .site_visible_to(owner.id, &uuid)
        .await
        .unwrap()
        .unwrap();
    let mut chargers = Vec::new();
    for identity in identities {
        let new = NewCharger {
            identity: identity.to_string(),
            site_uuid: Some(uuid.clone()),
            ..Default::default()
        };
        let charger_uuid = store.add_charger(&new).await.unwrap();
        let id = store.site_charger_ids(site.id).await.unwrap()[&charger_uuid];
        chargers.push((charger_uuid, id));
    }
    (team, site.id, chargers)
}

store_test!(
    settings_have_defaults_until_saved_and_keep_what_was_saved,
    |store| {
        let (team, site, chargers) = site_with(&store, "a@example.com", &["CP-A", "CP-B"]).await;
        let defaults = store.smart_charging_settings(site).await.unwrap();
        assert_eq!(defaults, SmartChargingSettings::defaults(MODE_DISABLED));

        let meter = store
            .add_meter(team, chargers[0].1, CT_METER)
            .await
            .unwrap();
        let mut wanted = SmartChargingSettings {
            mode: MODE_DYNAMIC.into(),
            grid_limit_amps: Some(63.5),
            meter_id: Some(meter.id),
            strategy: STRATEGY_PRIORITY.into(),
            min_amps: 8.0,
            safety_margin_amps: 2.5,
            fail_safe_amps: 0.0,
            meter_timeout_seconds: 120,
            priorities: vec![(chargers[1].0.clone(), 7), (chargers[0].0.clone(), 3)],
            ..SmartChargingSettings::defaults(MODE_DISABLED)
        };
        let saved = store
            .save_smart_charging_settings(site, &wanted)
            .await
            .unwrap();
        wanted.meter_uuid = Some(meter.uuid.clone());
        wanted.priorities.sort();
        wanted.updated_at = saved.updated_at.clone();
        assert!(saved.updated_at.is_some());
        assert_eq!(saved, wanted);
        assert_eq!(store.smart_charging_settings(site).await.unwrap(), wanted);
        let mode: String = sqlx::query_scalar("SELECT smart_charging FROM sites WHERE id = $1")
            .bind(site)
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(mode, MODE_DYNAMIC);

        // Saving again replaces the priorities and keeps what the balancer wrote.
        sqlx::query("UPDATE site_smart_charging SET balancer = 'b1', computed_at = 'x'")
            .execute(&store.pool)
            .await
            .unwrap();
        wanted.mode = MODE_STATIC.into();
        wanted.priorities = vec![(chargers[0].0.clone(), 1)];
        let saved = store
            .save_smart_charging_settings(site, &wanted)
            .await
            .unwrap();
        assert_eq!(saved.priorities, wanted.priorities);
        assert_eq!(saved.mode, MODE_STATIC);
        let kept: (Option<String>, Option<String>) =
            sqlx::query_as("SELECT balancer, computed_at FROM site_smart_charging")
                .fetch_one(&store.pool)
                .await
                .unwrap();
        assert_eq!(kept, (Some("b1".into()), Some("x".into())));
    }
);

store_test!(a_sites_meter_and_chargers_are_its_own, |store| {
    let (team, site, chargers) = site_with(&store, "a@example.com", &["CP-A"]).await;
    let (other_team, other_site, others) = site_with(&store, "b@example.com", &["CP-B"]).await;
    let meter = store
        .add_meter(team, chargers[0].1, CT_METER)
        .await
        .unwrap();
    let foreign = store
        .add_meter(other_team, others[0].1, CT_METER)
        .await
        .unwrap();
    assert_eq!(
        store.site_ct_meter_id(site, &meter.uuid).await.unwrap(),
        Some(meter.id)
    );
    assert_eq!(
        store.site_ct_meter_id(site, &foreign.uuid).await.unwrap(),
        None
    );
    assert_eq!(store.site_ct_meter_id(site, "nope").await.unwrap(), None);

    // Another site's charger named among the priorities is not written.
    let settings = SmartChargingSettings {
        priorities: vec![(others[0].0.clone(), 5), (chargers[0].0.clone(), 2)],
        ..SmartChargingSettings::defaults(MODE_DISABLED)
    };
    let saved = store
        .save_smart_charging_settings(site, &settings)
        .await
        .unwrap();
    assert_eq!(saved.priorities, [(chargers[0].0.clone(), 2)]);
    let other = store.smart_charging_settings(other_site).await.unwrap();
    assert!(other.priorities.is_empty());

    let owner = store.ensure_user_in("a@example.com", false).await.unwrap();
    let stranger = store.ensure_user_in("b@example.com", false).await.unwrap();
    let seen = store.site_chargers_seen_by(owner.id, site).await.unwrap();
    assert_eq!(seen, HashSet::from([chargers[0].0.clone()]));
    assert!(
        store
            .site_chargers_seen_by(stranger.id, site)
            .await
            .unwrap()
            .is_empty()
    );
});

store_test!(
    the_status_shows_the_computation_and_every_limit_sent,
    |store| {
        let (_, site, chargers) = site_with(&store, "a@example.com", &["CP-B", "CP-A"]).await;
        let status = store.smart_charging_status(site).await.unwrap();
        assert_eq!(status.state(), "disabled");
        assert_eq!(status.limits, []);
        assert_eq!(status.computation, None);

        let settings = SmartChargingSettings {
            mode: MODE_STATIC.into(),
            grid_limit_amps: Some(32.0),
            ..SmartChargingSettings::defaults(MODE_DISABLED)
        };
        store
            .save_smart_charging_settings(site, &settings)
            .await
            .unwrap();
        let status = store.smart_charging_status(site).await.unwrap();
        assert_eq!(
            (status.state(), status.grid_limit_amps),
            ("idle", Some(32.0))
        );

        sqlx::query(
            "UPDATE site_smart_charging SET computed_at = '2026-02-10T09:00:00.000000Z',
           meter_amps = 12.5, meter_phases = '{\"L1\":12.5}', available_amps = 19.5",
        )
        .execute(&store.pool)
        .await
        .unwrap();
        for (charger, connector, amps) in [
            (chargers[0].1, 1, 16.0),
            (chargers[1].1, 2, 10.5),
            (chargers[1].1, 0, 6.0),
        ] {
            sqlx::query(
                "INSERT INTO smart_charging_limits (charger_id, connector_id, limit_amps, purpose,
               session, action_uuid, status, sent_at)
             VALUES ($1, $2, $3, 'TxProfile', 's', 'a', 'accepted', '2026-02-10T09:00:00.000000Z')",
            )
            .bind(charger)
            .bind(connector)
            .bind(amps)
            .execute(&store.pool)
            .await
            .unwrap();
        }
        let status = store.smart_charging_status(site).await.unwrap();
        assert_eq!(status.state(), "balancing");
        let computation = status.computation.as_ref().expect("a computation");
        assert_eq!(computation.meter_amps, Some(12.5));
        assert_eq!(computation.meter_phases.as_deref(), Some("{\"L1\":12.5}"));
        let seen: Vec<(&str, i64, f64)> = status
            .limits
            .iter()
            .map(|l| (l.identity.as_str(), l.connector_id, l.limit_amps))
            .collect();
        assert_eq!(
            seen,
            [("CP-A", 0, 6.0), ("CP-A", 2, 10.5), ("CP-B", 1, 16.0)]
        );
        assert_eq!(status.limits[0].charger_uuid, chargers[1].0);

        sqlx::query("UPDATE site_smart_charging SET fail_safe_since = 'now'")
            .execute(&store.pool)
            .await
            .unwrap();
        let status = store.smart_charging_status(site).await.unwrap();
        assert_eq!(status.state(), "fail_safe");
    }
);
