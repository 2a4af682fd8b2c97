use super::*;
use cms_ocpp::v201::Command;
use cms_store::local_lists::UpdateType;

fn entry(id_tag: &str, status: &str) -> ListEntry {
    ListEntry {
        id_tag: id_tag.into(),
        key: id_tag.to_ascii_uppercase(),
        status: status.into(),
        expiry_date: None,
        parent_id_tag: None,
    }
}

fn valid(request: &Value) {
    if let Err(violations) = Command::SendLocalList.validate_request(request) {
        panic!("{request} breaks the 2.0.1 schema: {violations:?}");
    }
}

#[test]
fn entries_go_as_id_tokens_with_their_info_and_removals_without() {
    let mut card = entry("card-1", "Accepted");
    card.expiry_date = Some("2030-01-01T00:00:00Z".into());
    card.parent_id_tag = Some("fleet".into());
    let update = ListUpdate {
        update_type: UpdateType::Differential,
        version: 4,
        changes: vec![
            ListChange::Remove {
                id_tag: "old".into(),
                key: "OLD".into(),
            },
            ListChange::Upsert(card.clone()),
            ListChange::Upsert(entry("stolen", "Blocked")),
        ],
        result: vec![card],
    };
    let request = send_local_list(&update);
    valid(&request);
    assert_eq!(
        request,
        json!({"versionNumber": 4, "updateType": "Differential", "localAuthorizationList": [
            {"idToken": {"idToken": "old", "type": "ISO14443"}},
            {"idToken": {"idToken": "card-1", "type": "ISO14443"},
             "idTokenInfo": {"status": "Accepted", "cacheExpiryDateTime": "2030-01-01T00:00:00Z",
               "groupIdToken": {"idToken": "fleet", "type": "ISO14443"}}},
            {"idToken": {"idToken": "stolen", "type": "ISO14443"},
             "idTokenInfo": {"status": "Blocked"}}
        ]})
    );
}

#[test]
fn a_full_update_of_an_empty_list_carries_no_entries() {
    let (update, request) = next_update_within(&[], 3, true, &[], ListLimits::default()).unwrap();
    assert_eq!(update.version, 4);
    valid(&request);
    assert_eq!(request, json!({"versionNumber": 4, "updateType": "Full"}));
}

#[test]
fn each_part_keeps_within_the_items_and_the_bytes_per_message() {
    let desired: Vec<ListEntry> = (0..20)
        .map(|i| entry(&format!("card-{i:02}"), "Accepted"))
        .collect();
    let items = ListLimits {
        max_send: Some(8),
        ..Default::default()
    };
    let (full, request) = next_update_within(&[], 0, true, &desired, items).unwrap();
    valid(&request);
    assert_eq!(
        (full.update_type, full.changes.len()),
        (UpdateType::Full, 8)
    );

    // One entry is about 90 bytes: 400 bytes hold a few, never 8.
    let bytes = ListLimits {
        max_send: Some(8),
        max_bytes: Some(400),
        ..Default::default()
    };
    let mut held = Vec::new();
    let (mut version, mut needs_full, mut parts) = (0, true, 0);
    while let Some((update, request)) =
        next_update_within(&held, version, needs_full, &desired, bytes)
    {
        valid(&request);
        let size = request.to_string().len() + FRAME_OVERHEAD;
        assert!(size <= 400, "{size} bytes: {request}");
        assert!(!update.changes.is_empty() && update.changes.len() < 8);
        held = update.result;
        version = update.version;
        needs_full = false;
        parts += 1;
    }
    assert_eq!(held, desired, "the parts add up to the list");
    assert!(parts >= 20 / 4, "{parts} parts");

    // An entry larger than the limit alone still goes, alone.
    let tiny = ListLimits {
        max_bytes: Some(10),
        ..Default::default()
    };
    let (update, _) = next_update_within(&[], 0, true, &desired, tiny).unwrap();
    assert_eq!(update.changes.len(), 1);
}
