use super::Sources;
use std::net::IpAddr;

fn ip(text: &str) -> IpAddr {
    text.parse().expect("an IP address")
}

#[test]
fn an_address_gets_its_limit_of_turns_and_one_more_once_one_is_given_back() {
    let sources = Sources::new(2);
    let first = sources.take(ip("127.0.0.2")).expect("a first turn");
    let _second = sources.take(ip("127.0.0.2")).expect("a second turn");
    assert!(sources.take(ip("127.0.0.2")).is_none(), "a third at once");
    assert!(sources.take(ip("127.0.0.3")).is_some(), "another address");
    // Seen from a dual-stack listener, the same IPv4 client.
    assert!(sources.take(ip("::ffff:127.0.0.2")).is_none());

    drop(first);
    assert!(sources.take(ip("127.0.0.2")).is_some());
}

#[test]
fn ipv6_addresses_count_by_their_64_bit_prefix() {
    let sources = Sources::new(1);
    let _turn = sources.take(ip("2001:db8:1:2::1")).expect("a turn");
    assert!(
        sources.take(ip("2001:db8:1:2:ffff::9")).is_none(),
        "same /64"
    );
    assert!(sources.take(ip("2001:db8:1:3::1")).is_some(), "another /64");
}

#[test]
fn a_limit_of_0_limits_nothing() {
    let sources = Sources::new(0);
    let turns: Vec<_> = (0..100).map(|_| sources.take(ip("127.0.0.2"))).collect();
    assert!(turns.iter().all(Option::is_some));
}
