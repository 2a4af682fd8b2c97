use super::*;
use crate::NewCharger;
use crate::id_tags::IdTagFields;
use crate::providers::NewProvider;
use crate::sites::SiteAddress;
use crate::test_support::store_test;

fn address() -> SiteAddress {
    SiteAddress {
        name: "Depot".into(),
        street: "Stationsplein".into(),
        house_number: 12,
        house_number_addition: None,
        postal_code: "1012 AB".into(),
        city: "Amsterdam".into(),
        country: "NL".into(),
    }
}

fn tag(id_tag: &str) -> IdTagFields {
    IdTagFields {
        id_tag: id_tag.into(),
        status: "Accepted".into(),
        expiry_date: None,
        parent_id_tag: None,
        name: None,
    }
}

fn charger(identity: &str, site: &str) -> NewCharger {
    NewCharger {
        identity: identity.into(),
        site_uuid: Some(site.into()),
        security_profile: 1,
        ..Default::default()
    }
}

fn reached(result: Result<impl std::fmt::Debug>) -> QuotaReached {
    match result {
        Err(StoreError::QuotaReached(reached)) => reached,
        other => panic!("expected the quota to be reached, got {other:?}"),
    }
}

/// A personal team of a new user, with a site; returns the team's id and the site's uuid.
async fn team_with_site(store: &Store, email: &str) -> (i64, String) {
    let user = store.ensure_user_in(email, false).await.unwrap();
    let site = store
        .create_site(user.personal_team_id, &address())
        .await
        .unwrap();
    (user.personal_team_id, site)
}

store_test!(a_creation_is_counted_after_the_one_under_way, |store| {
    let store = store.with_quotas(Quotas {
        tokens: 1,
        ..Quotas::DEFAULT
    });
    let user = store.ensure_user("user@example.com").await.unwrap();
    // A creation under way: its token written and counted, not committed yet.
    let mut under_way = store.begin_write().await.unwrap();
    sqlx::query(
        "INSERT INTO personal_access_tokens (user_id, name, token_hash, scopes, created_at,
           updated_at)
         VALUES ($1, 'under way', 'not a hash', '*', $2, $2)",
    )
    .bind(user.id)
    .bind(crate::now_record_time())
    .execute(&mut *under_way)
    .await
    .unwrap();
    store
        .enforce_quota(&mut under_way, Quota::Tokens, user.id)
        .await
        .unwrap();
    // Another creation meanwhile is counted only once the first has committed.
    let other = {
        let store = store.clone();
        let scopes = ["*".to_string()];
        tokio::spawn(async move {
            store
                .create_personal_access_token(user.id, "meanwhile", &scopes)
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    under_way.commit().await.unwrap();
    let refused = reached(other.await.unwrap());
    assert_eq!(
        refused.to_string(),
        "The user has reached their quota of 1 personal access tokens."
    );
    let (_, held) = store.personal_access_tokens(user.id, 10, 0).await.unwrap();
    assert_eq!(held, 1);
});

store_test!(an_import_past_the_charger_quota_registers_none, |store| {
    let store = store.with_quotas(Quotas {
        chargers: 3,
        ..Quotas::DEFAULT
    });
    let (_, site) = team_with_site(&store, "owner@example.com").await;
    store.add_charger(&charger("CP-1", &site)).await.unwrap();
    let batch: Vec<NewCharger> = ["CP-2", "CP-3", "CP-4"]
        .iter()
        .map(|identity| charger(identity, &site))
        .collect();
    let refused = reached(store.add_chargers(&batch).await);
    assert_eq!((refused.quota, refused.limit), (Quota::Chargers, 3));
    assert_eq!(store.charger_password("CP-2").await.unwrap(), None);
    store.add_chargers(&batch[..2]).await.unwrap();
    let refused = reached(store.add_charger(&charger("CP-5", &site)).await);
    assert_eq!(
        refused.to_string(),
        "The team has reached its quota of 3 chargers."
    );
});

store_test!(a_providers_tags_count_in_its_teams_id_tag_quota, |store| {
    let store = store.with_quotas(Quotas {
        id_tags: 3,
        ..Quotas::DEFAULT
    });
    let (team, _) = team_with_site(&store, "owner@example.com").await;
    store.create_id_tag(team, &tag("TEAM-1")).await.unwrap();
    let provider = NewProvider {
        name: "Roaming".into(),
        country_code: "NL".into(),
        party_id: "ABC".into(),
        tariff_id: None,
    };
    let provider = store.create_provider(team, &provider).await.unwrap();
    let tags_team = provider.id_tag_team_id;
    store
        .create_id_tag(tags_team, &tag("DRIVER-1"))
        .await
        .unwrap();

    // An import whose new tags do not fit writes none of them; a replaced tag is not new.
    let import = [tag("driver-1"), tag("DRIVER-2"), tag("DRIVER-3")];
    let refused = reached(store.import_id_tags(tags_team, &import).await);
    assert_eq!((refused.quota, refused.limit), (Quota::IdTags, 3));
    assert_eq!(store.id_tag(tags_team, "DRIVER-2").await.unwrap(), None);
    let counts = store.import_id_tags(tags_team, &import[..2]).await.unwrap();
    assert_eq!((counts.created, counts.updated), (1, 1));

    // The team holds 1 + 2 tags: its next one and its provider's are both refused.
    let refused = reached(store.create_id_tag(team, &tag("TEAM-2")).await);
    assert_eq!(
        refused.to_string(),
        "The team has reached its quota of 3 id tags."
    );
    reached(store.create_id_tag(tags_team, &tag("DRIVER-9")).await);
    assert_eq!(store.id_tag(team, "TEAM-2").await.unwrap(), None);
});

store_test!(a_users_tokens_and_teams_count_against_the_user, |store| {
    let store = store.with_quotas(Quotas {
        tokens: 2,
        teams: 1,
        ..Quotas::DEFAULT
    });
    let user = store.ensure_user("user@example.com").await.unwrap();
    let scopes = ["*".to_string()];
    let (first, _) = store
        .create_personal_access_token(user.id, "one", &scopes)
        .await
        .unwrap();
    store
        .create_personal_access_token(user.id, "two", &scopes)
        .await
        .unwrap();
    let refused = reached(
        store
            .create_personal_access_token(user.id, "three", &scopes)
            .await,
    );
    assert_eq!(
        refused.to_string(),
        "The user has reached their quota of 2 personal access tokens."
    );
    // A revoked token makes room.
    assert!(
        store
            .revoke_personal_access_token(user.id, first.id)
            .await
            .unwrap()
    );
    store
        .create_personal_access_token(user.id, "three", &scopes)
        .await
        .unwrap();

    let team = crate::teams::NewTeam {
        name: "Fleet".into(),
        email: "fleet@example.com".into(),
        team_type: "business".into(),
    };
    store.create_team(user.id, &team).await.unwrap();
    let refused = reached(store.create_team(user.id, &team).await);
    assert_eq!((refused.quota, refused.limit), (Quota::Teams, 1));
});
