use crate::ocpi::parties::PartyConnection;
use crate::ocpi::token_hash;
use crate::providers::NewProvider;
use crate::test_support::store_test;

async fn new_provider(store: &crate::Store, party_id: &str) -> (i64, i64) {
    let user = store.ensure_user("ops@example.com").await.unwrap();
    let team = user.personal_team_id;
    let new = NewProvider {
        name: format!("eMSP {party_id}"),
        country_code: "NL".into(),
        party_id: party_id.into(),
        tariff_id: None,
    };
    (team, store.create_provider(team, &new).await.unwrap().id)
}

fn connection(token: &str, status: &str) -> PartyConnection {
    PartyConnection {
        incoming_token_hash: token_hash(token),
        outgoing_token: Some("theirs".into()),
        status: status.into(),
        versions_url: Some("https://emsp.example/versions".into()),
        endpoints: Some(
            r#"[{"identifier":"locations","role":"RECEIVER","url":"https://emsp.example/loc"}]"#
                .into(),
        ),
        roles: None,
    }
}

store_test!(
    a_party_is_found_by_its_token_only_and_replaced_on_rotation,
    |store| {
        let (team, provider) = new_provider(&store, "EMP").await;
        let (_, other) = new_provider(&store, "XYZ").await;
        store
            .ocpi_save_party(provider, &connection("token-a", "pending"))
            .await
            .unwrap();
        store
            .ocpi_save_party(other, &connection("other", "registered"))
            .await
            .unwrap();

        let party = store.ocpi_party_by_token("token-a").await.unwrap().unwrap();
        assert_eq!((party.provider_id, party.team_id), (provider, team));
        assert_eq!(
            (party.country_code.as_str(), party.party_id.as_str()),
            ("NL", "EMP")
        );
        assert!(!party.is_registered());
        assert_eq!(
            party.endpoint("locations", "RECEIVER").as_deref(),
            Some("https://emsp.example/loc")
        );
        assert_eq!(party.endpoint("locations", "SENDER"), None);
        assert!(
            store
                .ocpi_party_by_token("token-b")
                .await
                .unwrap()
                .is_none()
        );

        // Registration replaces the token: the old one finds nothing.
        store
            .ocpi_save_party(provider, &connection("token-c", "registered"))
            .await
            .unwrap();
        assert!(
            store
                .ocpi_party_by_token("token-a")
                .await
                .unwrap()
                .is_none()
        );
        let registered = store.ocpi_registered_parties().await.unwrap();
        assert_eq!(registered.len(), 2);

        assert!(store.ocpi_delete_party(provider).await.unwrap());
        assert!(!store.ocpi_delete_party(provider).await.unwrap());
        assert!(
            store
                .ocpi_party_by_token("token-c")
                .await
                .unwrap()
                .is_none()
        );
        assert!(store.ocpi_party_of_provider(other).await.unwrap().is_some());
    }
);

store_test!(a_teams_cpo_identity_is_set_and_replaced, |store| {
    let (team, _) = new_provider(&store, "EMP").await;
    assert!(store.ocpi_cpo(team).await.unwrap().is_none());
    store
        .ocpi_save_cpo(team, "NL", "CMS", "Charging Co", None)
        .await
        .unwrap();
    store
        .ocpi_save_cpo(
            team,
            "BE",
            "CMB",
            "Charging Co BE",
            Some("https://c.example"),
        )
        .await
        .unwrap();
    let cpo = store.ocpi_cpo(team).await.unwrap().unwrap();
    assert_eq!(
        (cpo.country_code.as_str(), cpo.party_id.as_str()),
        ("BE", "CMB")
    );
    assert_eq!(cpo.website.as_deref(), Some("https://c.example"));
});
