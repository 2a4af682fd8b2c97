use super::*;
use crate::teams::NewTeam;
use crate::test_support::store_test;

/// A new team of a new user; returns the team's id.
async fn team(store: &Store, name: &str) -> i64 {
    let user = store
        .ensure_user_in(&format!("{name}@example.com"), false)
        .await
        .unwrap();
    let new = NewTeam {
        name: name.into(),
        email: format!("{name}@example.com"),
        team_type: "business".into(),
    };
    store.create_team(user.id, &new).await.unwrap().id
}

fn blocked(id_tag: &str, name: &str) -> IdTagFields {
    IdTagFields {
        id_tag: id_tag.into(),
        status: "Blocked".into(),
        expiry_date: Some("2026-11-21T10:00:00Z".into()),
        parent_id_tag: Some("FLEET".into()),
        name: Some(name.into()),
    }
}

store_test!(a_tag_is_found_in_any_case_and_unique_per_team, |store| {
    let acme = team(&store, "acme").await;
    let other = team(&store, "other").await;
    let created = store
        .create_id_tag(acme, &blocked("aBc123", "Van 1"))
        .await
        .unwrap();
    assert_eq!(created.id_tag, "aBc123", "kept as written");
    assert_eq!(created.status, "Blocked");
    assert_eq!(created.expiry_date.as_deref(), Some("2026-11-21T10:00:00Z"));
    assert_eq!(created.created_at, created.updated_at);

    assert_eq!(store.id_tag(acme, "ABC123").await.unwrap(), Some(created));
    assert_eq!(store.id_tag(other, "abc123").await.unwrap(), None);
    assert!(matches!(
        store.create_id_tag(acme, &IdTagFields::accepted("ABC123")).await,
        Err(StoreError::Conflict(m)) if m == ID_TAG_TAKEN
    ));
    let theirs = store
        .create_id_tag(other, &IdTagFields::accepted("ABC123"))
        .await
        .unwrap();
    assert_eq!(theirs.team_id, other, "another team may hold the same tag");
});

store_test!(tags_list_in_key_order_a_page_at_a_time, |store| {
    let acme = team(&store, "acme").await;
    for tag in ["c", "A", "b", "D", "B-1"] {
        store
            .create_id_tag(acme, &IdTagFields::accepted(tag))
            .await
            .unwrap();
    }
    let (first, total) = store.id_tags(acme, 3, 0).await.unwrap();
    let tags: Vec<&str> = first.iter().map(|t| t.id_tag.as_str()).collect();
    assert_eq!((tags, total), (vec!["A", "b", "B-1"], 5));
    let (rest, _) = store.id_tags(acme, 3, 3).await.unwrap();
    let tags: Vec<&str> = rest.iter().map(|t| t.id_tag.as_str()).collect();
    assert_eq!(tags, ["c", "D"]);
});

store_test!(a_replacement_sets_every_field_but_the_tag, |store| {
    let acme = team(&store, "acme").await;
    let created = store
        .create_id_tag(acme, &blocked("card-1", "Van 1"))
        .await
        .unwrap();
    let replaced = store
        .replace_id_tag(acme, "CARD-1", &IdTagFields::accepted("Card-1"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(replaced.id, created.id);
    assert_eq!(replaced.id_tag, "Card-1", "the case may change");
    assert_eq!(replaced.status, "Accepted");
    assert_eq!(
        (replaced.expiry_date, replaced.parent_id_tag, replaced.name),
        (None, None, None),
        "fields left out are cleared"
    );
    assert_eq!(replaced.created_at, created.created_at);
    assert!(replaced.updated_at >= created.updated_at);

    assert!(matches!(
        store
            .replace_id_tag(acme, "card-1", &IdTagFields::accepted("card-2"))
            .await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(
        store
            .replace_id_tag(acme, "nope", &IdTagFields::accepted("nope"))
            .await
            .unwrap(),
        None
    );
});

store_test!(a_tag_is_deleted_by_its_own_team_only, |store| {
    let acme = team(&store, "acme").await;
    let other = team(&store, "other").await;
    store
        .create_id_tag(acme, &IdTagFields::accepted("card"))
        .await
        .unwrap();
    assert!(!store.delete_id_tag(other, "card").await.unwrap());
    assert!(store.delete_id_tag(acme, "CARD").await.unwrap());
    assert!(!store.delete_id_tag(acme, "card").await.unwrap());
    assert_eq!(store.id_tag(acme, "card").await.unwrap(), None);
});

store_test!(
    an_import_creates_new_tags_and_replaces_known_ones,
    |store| {
        let acme = team(&store, "acme").await;
        let other = team(&store, "other").await;
        store
            .create_id_tag(acme, &IdTagFields::accepted("known"))
            .await
            .unwrap();
        store
            .create_id_tag(other, &IdTagFields::accepted("mine"))
            .await
            .unwrap();
        // More than a chunk, with a known tag in another case and one tag given twice.
        let mut rows: Vec<IdTagFields> = (0..IMPORT_CHUNK + 10)
            .map(|i| IdTagFields::accepted(&format!("tag{i:04}")))
            .collect();
        rows.push(blocked("KNOWN", "renamed"));
        rows.push(IdTagFields::accepted("MINE"));
        rows.push(blocked("tag0000", "last wins"));
        let counts = store.import_id_tags(acme, &rows).await.unwrap();
        assert_eq!(
            counts,
            ImportCounts {
                created: IMPORT_CHUNK as u64 + 11,
                updated: 1
            }
        );
        let (_, total) = store.id_tags(acme, 1, 0).await.unwrap();
        assert_eq!(total, IMPORT_CHUNK as i64 + 12);
        let known = store.id_tag(acme, "known").await.unwrap().unwrap();
        assert_eq!(
            (known.id_tag.as_str(), known.status.as_str()),
            ("KNOWN", "Blocked")
        );
        let twice = store.id_tag(acme, "tag0000").await.unwrap().unwrap();
        assert_eq!(twice.name.as_deref(), Some("last wins"));
        let (_, theirs) = store.id_tags(other, 10, 0).await.unwrap();
        assert_eq!(theirs, 1, "another team's tags are untouched");

        let again = store.import_id_tags(acme, &rows).await.unwrap();
        assert_eq!(
            again,
            ImportCounts {
                created: 0,
                updated: IMPORT_CHUNK as u64 + 12
            }
        );
    }
);
