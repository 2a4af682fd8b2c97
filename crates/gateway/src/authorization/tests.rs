use super::*;
use chrono::TimeZone;
use cms_bus::{IdTagEntry, Registration, RegistryState};

const OWNER: i64 = 10;
const GUEST: i64 = 7;

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 24, 12, 0, 0).unwrap()
}

/// CP-1 and CP-2 on a site checking the tags of OWNER and GUEST; CP-OPEN on an open site.
fn authority() -> (Authority, Arc<IdTagDirectory>) {
    let registry = Arc::new(RegistryDirectory::default());
    let register = |identity: &str, authorization: SiteAuthorization| {
        let registration = Registration {
            password_hash: None,
            security_profile: 0,
            authorization,
            proxy: None,
            price_text: None,
            ocpi_location: None,
        };
        registry.apply_state(identity, RegistryState::Registered(registration));
    };
    let checked = SiteAuthorization::IdTags {
        teams: vec![OWNER, GUEST].into(),
    };
    register("CP-1", checked.clone());
    register("CP-2", checked);
    register("CP-OPEN", SiteAuthorization::Open);
    let tags = Arc::new(IdTagDirectory::default());
    (Authority::new(registry, tags.clone()), tags)
}

fn tag(team_id: i64, id_tag: &str, status: IdTagStatus) -> IdTagEntry {
    IdTagEntry {
        team_id,
        id_tag: id_tag.into(),
        status,
        expiry_date: None,
        parent_id_tag: None,
        ocpi: None,
    }
}

fn add(tags: &IdTagDirectory, entry: IdTagEntry) {
    tags.apply(
        entry.team_id,
        &entry.id_tag.to_ascii_uppercase(),
        Some(&entry),
    );
}

#[test]
fn each_stored_status_is_answered_and_unknown_tags_are_invalid() {
    let (authority, tags) = authority();
    add(&tags, tag(OWNER, "good", IdTagStatus::Accepted));
    add(&tags, tag(OWNER, "lost", IdTagStatus::Blocked));
    add(&tags, tag(OWNER, "old", IdTagStatus::Expired));
    add(&tags, tag(OWNER, "bad", IdTagStatus::Invalid));
    let status = |id_tag: &str| authority.authorize("CP-1", id_tag, now()).status;
    assert_eq!(status("good"), "Accepted");
    assert_eq!(
        status("GOOD"),
        "Accepted",
        "tags compare case-insensitively"
    );
    assert_eq!(status("lost"), "Blocked");
    assert_eq!(status("old"), "Expired");
    assert_eq!(status("bad"), "Invalid");
    assert_eq!(status("stranger"), "Invalid");
    assert_eq!(
        authority.authorize("CP-GONE", "good", now()).status,
        "Invalid"
    );
    assert_eq!(
        authority.authorize("CP-OPEN", "stranger", now()),
        Verdict::ACCEPTED
    );
}

#[test]
fn an_accepted_tag_past_its_expiry_date_is_expired_and_the_date_is_told() {
    let (authority, tags) = authority();
    let expiry = now().timestamp();
    add(
        &tags,
        IdTagEntry {
            expiry_date: Some(expiry),
            parent_id_tag: Some("Fleet-A".into()),
            ..tag(OWNER, "card", IdTagStatus::Accepted)
        },
    );
    let before = authority.authorize("CP-1", "card", now() - chrono::Duration::seconds(1));
    assert_eq!(before.status, "Accepted");
    assert_eq!(before.expiry_date, Some(now()));
    assert_eq!(before.parent_id_tag.as_deref(), Some("Fleet-A"));
    assert_eq!(authority.authorize("CP-1", "card", now()).status, "Expired");
}

#[test]
fn a_tag_of_several_teams_is_accepted_when_one_accepts_it_else_the_owner_decides() {
    let (authority, tags) = authority();
    add(&tags, tag(OWNER, "shared", IdTagStatus::Blocked));
    add(&tags, tag(GUEST, "shared", IdTagStatus::Accepted));
    assert_eq!(
        authority.authorize("CP-1", "shared", now()).status,
        "Accepted"
    );
    add(&tags, tag(GUEST, "both", IdTagStatus::Invalid));
    add(&tags, tag(OWNER, "both", IdTagStatus::Blocked));
    assert_eq!(authority.authorize("CP-1", "both", now()).status, "Blocked");
    // A team whose tags do not apply to the charger's site decides nothing.
    add(&tags, tag(99, "outsider", IdTagStatus::Accepted));
    assert_eq!(
        authority.authorize("CP-1", "outsider", now()).status,
        "Invalid"
    );
    tags.apply(GUEST, "SHARED", None);
    assert_eq!(
        authority.authorize("CP-1", "shared", now()).status,
        "Blocked"
    );
}

#[test]
fn a_tag_charging_at_one_charger_is_concurrent_at_another_until_it_stops() {
    let (authority, tags) = authority();
    add(&tags, tag(OWNER, "card", IdTagStatus::Accepted));
    let started = authority.start("CP-1", 1, "card", 500, now());
    assert_eq!(started.status, "Accepted");
    assert_eq!(
        authority.authorize("CP-2", "CARD", now()).status,
        "ConcurrentTx"
    );
    assert_eq!(
        authority.start("CP-2", 1, "card", 501, now()).status,
        "ConcurrentTx"
    );
    assert_eq!(
        authority.authorize("CP-1", "card", now()).status,
        "Accepted",
        "the charger it charges at may ask again (to stop)"
    );
    let stopped = authority.stop("CP-1", 500, Some("card"), now()).unwrap();
    assert_eq!(stopped.status, "Accepted");
    authority.stop("CP-2", 501, None, now());
    assert_eq!(
        authority.authorize("CP-2", "card", now()).status,
        "Accepted"
    );
    // On an open site every tag is accepted, concurrent or not.
    authority.start("CP-1", 1, "card", 502, now());
    assert_eq!(
        authority.authorize("CP-OPEN", "card", now()).status,
        "Accepted"
    );
}

#[test]
fn a_refused_start_is_answered_with_its_verdict() {
    let (authority, tags) = authority();
    add(&tags, tag(OWNER, "lost", IdTagStatus::Blocked));
    assert_eq!(
        authority.start("CP-1", 1, "lost", 600, now()).status,
        "Blocked"
    );
    assert_eq!(
        authority.start("CP-1", 2, "nobody", 601, now()).status,
        "Invalid"
    );
}
