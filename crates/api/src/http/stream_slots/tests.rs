//! The places for live streams, taken and given back as streams open and end.

use super::*;

fn limits(per_user: usize, total: usize) -> StreamLimits {
    StreamLimits {
        per_user,
        total,
        max_life: DEFAULT_STREAM_MAX_LIFE,
    }
}

#[test]
fn a_user_past_their_limit_is_refused_while_another_user_gets_a_place() {
    let slots = StreamSlots::new(limits(2, 10));
    let held = [slots.take(1).unwrap(), slots.take(1).unwrap()];
    assert_eq!(slots.take(1).err(), Some(Refused::User { per_user: 2 }));
    let other = slots.take(2).expect("another user has places of their own");

    drop(held);
    let again = [slots.take(1).unwrap(), slots.take(1).unwrap()];
    drop((again, other));
}

#[test]
fn past_the_total_everyone_is_refused_until_a_stream_ends() {
    let slots = StreamSlots::new(limits(10, 3));
    let mut held: Vec<Slot> = (1..=3).map(|user| slots.take(user).unwrap()).collect();
    assert_eq!(slots.take(4).err(), Some(Refused::Total));
    assert_eq!(slots.take(1).err(), Some(Refused::Total));

    held.pop();
    assert!(slots.take(4).is_ok(), "a place given back is taken again");
}

#[test]
fn a_user_at_their_limit_hears_of_it_even_when_the_process_is_full() {
    let slots = StreamSlots::new(limits(1, 1));
    let _held = slots.take(1).unwrap();
    assert_eq!(slots.take(1).err(), Some(Refused::User { per_user: 1 }));
    assert_eq!(slots.take(2).err(), Some(Refused::Total));
}

#[test]
fn by_default_streams_take_half_the_connections() {
    let defaults = StreamLimits::beside(512);
    assert_eq!((defaults.per_user, defaults.total), (10, 256));
    assert_eq!(defaults.max_life, Duration::from_secs(3600));
}

#[tokio::test]
async fn refusals_are_429_for_the_user_and_503_for_the_total_with_retry_after() {
    for (refused, status) in [(Refused::User { per_user: 10 }, 429), (Refused::Total, 503)] {
        let response = refused.into_response();
        assert_eq!(response.status().as_u16(), status);
        let retry_after = response.headers()[RETRY_AFTER].to_str().unwrap();
        assert!(retry_after.parse::<u32>().unwrap() > 0, "{retry_after}");
        let body = axum::body::to_bytes(response.into_body(), 1024)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert!(body["message"].is_string(), "{body}");
    }
}
