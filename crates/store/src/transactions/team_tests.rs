//! Which transactions a team lists: its own sites' chargers, and a guest site's chargers only
//! while the team reads their sensitive data, and only those its access covers.

use super::{TransactionFilter, TransactionStatus};
use crate::sites::{AssetAccess, NewInvite, SiteAddress};
use crate::test_support::store_test;
use crate::{NewCharger, StateChange, Store};

fn at(minute: u32) -> String {
    format!("2026-02-10T09:{minute:02}:00.000000Z")
}

fn start(identity: &str, id: i64, minute: u32) -> StateChange {
    StateChange::TransactionStarted {
        identity: identity.into(),
        ocpp_transaction_id: id,
        connector_id: 1,
        id_tag: "TAG".into(),
        id_tag_status: Some("Accepted".into()),
        meter_start: 0,
        reservation_id: None,
        started_at: at(minute),
        at: at(minute),
    }
}

/// `(identity, transaction id)` of the team's listing, newest first.
async fn listed(store: &Store, team: i64, filter: &TransactionFilter) -> Vec<(String, i64)> {
    let (rows, total) = store
        .team_transactions(team, filter, None, 25, 0)
        .await
        .unwrap();
    assert_eq!(total as usize, rows.len());
    rows.into_iter()
        .map(|t| (t.charger_identity, t.transaction.ocpp_transaction_id))
        .collect()
}

store_test!(
    a_guest_team_lists_only_what_it_reads_the_sensitive_data_of,
    |store| {
        let owner = store
            .ensure_user_in("owner@example.com", false)
            .await
            .unwrap();
        let guest = store
            .ensure_user_in("guest@example.com", false)
            .await
            .unwrap();
        let address = SiteAddress {
            name: "Depot".into(),
            street: "Stationsplein".into(),
            house_number: 12,
            house_number_addition: None,
            postal_code: "1012 AB".into(),
            city: "Amsterdam".into(),
            country: "NL".into(),
        };
        let site_uuid = store
            .create_site(owner.personal_team_id, &address)
            .await
            .unwrap();
        let mut uuids = Vec::new();
        for identity in ["CP-1", "CP-2"] {
            let new = NewCharger {
                identity: identity.into(),
                site_uuid: Some(site_uuid.clone()),
                ..Default::default()
            };
            uuids.push(store.add_charger(&new).await.unwrap());
        }
        store
            .apply(&[start("CP-1", 1, 0), start("CP-2", 2, 10)])
            .await
            .unwrap();
        let site = store
            .site_visible_to(owner.id, &site_uuid)
            .await
            .unwrap()
            .unwrap();
        let cp1 = store.site_charger_ids(site.id).await.unwrap()[&uuids[0]];
        let all = TransactionFilter::default();
        let both = [("CP-2".to_string(), 2), ("CP-1".to_string(), 1)];
        assert_eq!(listed(&store, owner.personal_team_id, &all).await, both);

        // The guest team sees CP-1 only, first without its sensitive data.
        let invite = NewInvite {
            email: "guest@example.com".into(),
            transfer_ownership: false,
            data_access: false,
            data_access_expires_at: None,
            assets: AssetAccess::Chargers(vec![cp1]),
        };
        let made = store
            .create_site_invite(site.id, owner.id, &invite)
            .await
            .unwrap();
        store
            .accept_site_invite(&site_uuid, &made.token, guest.id, guest.personal_team_id)
            .await
            .unwrap();
        let team = guest.personal_team_id;
        assert_eq!(listed(&store, team, &all).await, []);
        store
            .grant_sensitive_data(site.id, team, Some("2000-01-01T00:00:00.000000Z"))
            .await
            .unwrap();
        assert_eq!(listed(&store, team, &all).await, [], "an expired grant");
        store
            .grant_sensitive_data(site.id, team, None)
            .await
            .unwrap();
        assert_eq!(listed(&store, team, &all).await, both[1..]);
        let stopped = TransactionFilter {
            status: Some(TransactionStatus::Stopped),
            ..Default::default()
        };
        assert_eq!(listed(&store, team, &stopped).await, []);
        let batch = store
            .team_transactions_after(team, &all, None, None, 10)
            .await
            .unwrap();
        assert_eq!(batch.len(), 1);
    }
);
