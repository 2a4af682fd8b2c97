use super::*;
use crate::NewCharger;
use crate::access::Permissions;
use crate::test_support::store_test;

fn address(name: &str) -> SiteAddress {
    SiteAddress {
        name: name.into(),
        street: "Stationsplein".into(),
        house_number: 12,
        house_number_addition: Some("A".into()),
        postal_code: "1012 AB".into(),
        city: "Amsterdam".into(),
        country: "NL".into(),
    }
}

/// A site of a new user's personal team with chargers `identities`; returns the owner,
/// the site and the chargers' ids.
async fn owned_site(store: &Store, identities: &[&str]) -> (crate::User, Site, Vec<i64>) {
    let owner = store
        .ensure_user_in("owner@example.com", false)
        .await
        .unwrap();
    let uuid = store
        .create_site(owner.personal_team_id, &address("Depot"))
        .await
        .unwrap();
    for identity in identities {
        store
            .add_charger(&NewCharger {
                identity: identity.to_string(),
                site_uuid: Some(uuid.clone()),
                ..Default::default()
            })
            .await
            .unwrap();
    }
    let site = store
        .site_visible_to(owner.id, &uuid)
        .await
        .unwrap()
        .unwrap();
    let ids = store.site_charger_ids(site.id).await.unwrap();
    let mut ids: Vec<i64> = ids.into_values().collect();
    ids.sort();
    (owner, site, ids)
}

fn invite(email: &str, assets: AssetAccess) -> NewInvite {
    NewInvite {
        email: email.into(),
        transfer_ownership: false,
        data_access: true,
        data_access_expires_at: None,
        assets,
    }
}

store_test!(an_accepted_invite_grants_what_it_describes_once, |store| {
    let (owner, site, chargers) = owned_site(&store, &["CP-1", "CP-2"]).await;
    assert_eq!(site.permissions, Permissions::from_grants(1, 1));
    assert_eq!(site.chargers_count, 2);
    assert_eq!(
        site.address.as_deref(),
        Some("Stationsplein 12A, 1012 AB Amsterdam")
    );
    let guest = store
        .ensure_user_in("guest@example.com", false)
        .await
        .unwrap();
    let other = store
        .ensure_user_in("other@example.com", false)
        .await
        .unwrap();
    assert!(
        store
            .site_visible_to(guest.id, &site.uuid)
            .await
            .unwrap()
            .is_none()
    );

    let limited = AssetAccess::Chargers(vec![chargers[0]]);
    let made = store
        .create_site_invite(site.id, owner.id, &invite("Guest@Example.com", limited))
        .await
        .unwrap();
    assert_eq!(made.email, "guest@example.com");
    let accept = async |token: &str, user: &crate::User| {
        store
            .accept_site_invite(&site.uuid, token, user.id, user.personal_team_id)
            .await
            .unwrap()
    };
    assert_eq!(accept("wrong", &guest).await, Acceptance::InvalidToken);
    assert_eq!(accept(&made.token, &other).await, Acceptance::OtherEmail);
    let elsewhere = store
        .accept_site_invite(
            "no-such-site",
            &made.token,
            guest.id,
            guest.personal_team_id,
        )
        .await
        .unwrap();
    assert_eq!(elsewhere, Acceptance::InvalidToken);
    assert_eq!(
        accept(&made.token, &guest).await,
        Acceptance::Accepted { site_id: site.id }
    );
    assert_eq!(accept(&made.token, &guest).await, Acceptance::InvalidToken);

    let seen = store
        .site_visible_to(guest.id, &site.uuid)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(seen.permissions, Permissions::from_grants(0, 1));
    assert_eq!(seen.chargers_count, 1);
    let (visible, _) = store
        .chargers_visible_to(guest.id, None, 25, 0)
        .await
        .unwrap();
    assert_eq!(
        visible.iter().map(|c| c.id).collect::<Vec<_>>(),
        [chargers[0]]
    );

    let teams = store.site_teams(site.id, None).await.unwrap();
    let roles: Vec<&str> = teams.iter().map(|t| t.role.as_str()).collect();
    assert_eq!(roles, [OWNER_ROLE, GUEST_ROLE]);
    assert!(teams[1].sensitive_data && !teams[1].can_access_all_assets);
    assert_eq!(teams[1].accessible_assets, [visible[0].uuid.clone()]);
    // What a guest may know: the owner and its own teams, not the other guests.
    let third = store
        .ensure_user_in("third@example.com", false)
        .await
        .unwrap();
    let made = store
        .create_site_invite(
            site.id,
            owner.id,
            &invite("third@example.com", AssetAccess::All),
        )
        .await
        .unwrap();
    assert!(matches!(
        accept(&made.token, &third).await,
        Acceptance::Accepted { .. }
    ));
    assert_eq!(store.site_teams(site.id, None).await.unwrap().len(), 3);
    let as_guest = store.site_teams(site.id, Some(guest.id)).await.unwrap();
    let ids: Vec<i64> = as_guest.iter().map(|t| t.team.id).collect();
    assert_eq!(ids, [owner.personal_team_id, guest.personal_team_id]);
});

store_test!(the_owner_team_cannot_become_its_own_guest, |store| {
    let (owner, site, _) = owned_site(&store, &[]).await;
    let made = store
        .create_site_invite(
            site.id,
            owner.id,
            &invite("owner@example.com", AssetAccess::All),
        )
        .await
        .unwrap();
    let outcome = store
        .accept_site_invite(&site.uuid, &made.token, owner.id, owner.personal_team_id)
        .await
        .unwrap();
    assert_eq!(outcome, Acceptance::TeamOwnsSite);
    assert_eq!(store.site_teams(site.id, None).await.unwrap().len(), 1);
});

store_test!(
    transferring_keeps_the_old_owner_as_a_sensitive_guest,
    |store| {
        let (owner, site, _) = owned_site(&store, &["CP-1"]).await;
        let guest = store
            .ensure_user_in("guest@example.com", false)
            .await
            .unwrap();
        assert!(
            !store
                .transfer_site(site.id, guest.personal_team_id)
                .await
                .unwrap()
        );
        let mut new = invite("guest@example.com", AssetAccess::All);
        new.data_access = false;
        let made = store
            .create_site_invite(site.id, owner.id, &new)
            .await
            .unwrap();
        store
            .accept_site_invite(&site.uuid, &made.token, guest.id, guest.personal_team_id)
            .await
            .unwrap();
        let as_guest = store
            .site_visible_to(guest.id, &site.uuid)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(as_guest.permissions, Permissions::from_grants(0, 0));

        assert!(
            store
                .transfer_site(site.id, guest.personal_team_id)
                .await
                .unwrap()
        );
        let as_new_owner = store
            .site_visible_to(guest.id, &site.uuid)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(as_new_owner.permissions, Permissions::from_grants(1, 1));
        let as_old_owner = store
            .site_visible_to(owner.id, &site.uuid)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(as_old_owner.permissions, Permissions::from_grants(0, 1));
        let teams = store.site_teams(site.id, None).await.unwrap();
        let roles: Vec<(i64, &str)> = teams.iter().map(|t| (t.team.id, t.role.as_str())).collect();
        assert_eq!(
            roles,
            [
                (guest.personal_team_id, OWNER_ROLE),
                (owner.personal_team_id, GUEST_ROLE)
            ]
        );

        // An ownership invite hands the site back in one step.
        let mut back = invite("owner@example.com", AssetAccess::All);
        back.transfer_ownership = true;
        let made = store
            .create_site_invite(site.id, guest.id, &back)
            .await
            .unwrap();
        store
            .accept_site_invite(&site.uuid, &made.token, owner.id, owner.personal_team_id)
            .await
            .unwrap();
        let teams = store.site_teams(site.id, None).await.unwrap();
        let roles: Vec<(i64, &str)> = teams.iter().map(|t| (t.team.id, t.role.as_str())).collect();
        assert_eq!(
            roles,
            [
                (owner.personal_team_id, OWNER_ROLE),
                (guest.personal_team_id, GUEST_ROLE)
            ]
        );
    }
);

store_test!(
    sensitive_access_ends_when_it_expires_or_is_revoked,
    |store| {
        let (owner, site, _) = owned_site(&store, &[]).await;
        let guest = store
            .ensure_user_in("guest@example.com", false)
            .await
            .unwrap();
        let made = store
            .create_site_invite(
                site.id,
                owner.id,
                &invite("guest@example.com", AssetAccess::All),
            )
            .await
            .unwrap();
        store
            .accept_site_invite(&site.uuid, &made.token, guest.id, guest.personal_team_id)
            .await
            .unwrap();
        let team = guest.personal_team_id;
        let sensitive = async || {
            let site = store
                .site_visible_to(guest.id, &site.uuid)
                .await
                .unwrap()
                .unwrap();
            site.permissions.sensitive
        };
        assert!(sensitive().await);
        let past = "2000-01-01T00:00:00.000000Z";
        assert!(
            store
                .grant_sensitive_data(site.id, team, Some(past))
                .await
                .unwrap()
        );
        assert!(!sensitive().await);
        assert!(
            store
                .grant_sensitive_data(site.id, team, None)
                .await
                .unwrap()
        );
        assert!(sensitive().await);
        assert!(store.revoke_sensitive_data(site.id, team).await.unwrap());
        assert!(!sensitive().await);
        assert!(store.request_sensitive_data(site.id, team).await.unwrap());
        let team_uuid = store
            .acting_team(guest.id, None)
            .await
            .unwrap()
            .unwrap()
            .uuid;
        let access = store.site_team(site.id, &team_uuid).await.unwrap().unwrap();
        assert!(access.sensitive_data_requested_at.is_some());
        assert!(store.remove_site_access(site.id, team).await.unwrap());
        assert!(
            store
                .site_visible_to(guest.id, &site.uuid)
                .await
                .unwrap()
                .is_none()
        );
        assert!(!store.remove_site_access(site.id, team).await.unwrap());
    }
);

store_test!(a_site_with_chargers_is_not_deleted, |store| {
    let (owner, site, _) = owned_site(&store, &["CP-1"]).await;
    assert!(matches!(
        store.delete_site(site.id).await,
        Err(StoreError::Conflict(_))
    ));
    let empty = store
        .create_site(owner.personal_team_id, &address("Empty"))
        .await
        .unwrap();
    let empty = store
        .site_visible_to(owner.id, &empty)
        .await
        .unwrap()
        .unwrap();
    store.delete_site(empty.id).await.unwrap();
    assert!(
        store
            .site_visible_to(owner.id, &empty.uuid)
            .await
            .unwrap()
            .is_none()
    );
});

store_test!(changes_keep_what_they_do_not_name, |store| {
    let (owner, site, _) = owned_site(&store, &[]).await;
    let changes = SiteChanges {
        house_number: Some(7),
        house_number_addition: Some(None),
        ..Default::default()
    };
    store.update_site(site.id, changes).await.unwrap();
    let site = store
        .site_visible_to(owner.id, &site.uuid)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((site.name.as_str(), site.house_number), ("Depot", 7));
    assert_eq!(site.house_number_addition, None);
    assert_eq!(
        site.address.as_deref(),
        Some("Stationsplein 7, 1012 AB Amsterdam")
    );
});

store_test!(a_site_is_open_until_its_authorization_changes, |store| {
    let (owner, site, _) = owned_site(&store, &[]).await;
    assert_eq!(site.authorization_mode, AUTHORIZATION_OPEN);
    assert!(!site.local_authorization_list);
    let changes = SiteChanges {
        authorization_mode: Some(AUTHORIZATION_ID_TAGS.into()),
        local_authorization_list: Some(true),
        ..Default::default()
    };
    store.update_site(site.id, changes).await.unwrap();
    let site = store
        .site_visible_to(owner.id, &site.uuid)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(site.authorization_mode, AUTHORIZATION_ID_TAGS);
    assert!(site.local_authorization_list);
    assert_eq!(site.name, "Depot", "the address is kept");

    let authorization = SiteAuthorization {
        mode: AUTHORIZATION_ID_TAGS.into(),
        local_authorization_list: false,
    };
    let uuid = store
        .create_site_with(owner.personal_team_id, &address("Closed"), &authorization)
        .await
        .unwrap();
    let closed = store
        .site_visible_to(owner.id, &uuid)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(closed.authorization_mode, AUTHORIZATION_ID_TAGS);
    assert!(!closed.local_authorization_list);
});

store_test!(
    only_a_change_of_who_may_charge_or_of_the_local_list_reaches_the_change_log,
    |store| {
        let (_, site, _) = owned_site(&store, &["CP-AUTH"]).await;
        let last_seq = |changes: Vec<crate::RegistryChange>| changes.last().map_or(0, |c| c.seq);
        let seq = last_seq(store.registry_changes_since(0, 1000).await.unwrap());
        let quiet = [
            SiteChanges {
                name: Some("Depot Noord".into()),
                ..Default::default()
            },
            SiteChanges {
                authorization_mode: Some(AUTHORIZATION_OPEN.into()),
                ..Default::default()
            },
        ];
        for changes in quiet {
            store.update_site(site.id, changes).await.unwrap();
        }
        assert_eq!(store.registry_changes_since(seq, 10).await.unwrap(), []);
        let closing = SiteChanges {
            authorization_mode: Some(AUTHORIZATION_ID_TAGS.into()),
            ..Default::default()
        };
        store.update_site(site.id, closing).await.unwrap();
        let changes = store.registry_changes_since(seq, 10).await.unwrap();
        let identities: Vec<&str> = changes.iter().map(|c| c.identity.as_str()).collect();
        assert_eq!(identities, ["CP-AUTH"]);
        // The local list's keeper follows the log to learn that a site began keeping lists.
        let seq = last_seq(changes);
        let keeping = SiteChanges {
            local_authorization_list: Some(true),
            ..Default::default()
        };
        store.update_site(site.id, keeping).await.unwrap();
        let changes = store.registry_changes_since(seq, 10).await.unwrap();
        assert_eq!(changes.len(), 1, "{changes:?}");
    }
);
