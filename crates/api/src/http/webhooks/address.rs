//! Which addresses a webhook URL may not name without `--webhook-allow-private`: the
//! operator's own networks and the cloud's metadata service are not the receivers' to reach
//! through cms (server-side request forgery).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// What kind of address `ip` is when a webhook may not be sent to it, `None` when it is a
/// public address. IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`) are judged as their IPv4.
pub fn refused(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => refused_v4(v4),
            None => refused_v6(v6),
        },
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    Some(match () {
        _ if ip == Ipv4Addr::new(169, 254, 169, 254) => "metadata",
        _ if ip.is_loopback() => "loopback",
        // 0.0.0.0/8: "this network", which connects to the host itself.
        _ if a == 0 => "unspecified",
        _ if ip.is_private() => "private",
        _ if ip.is_link_local() => "link-local",
        _ if a == 100 && (b & 0xc0) == 64 => "carrier-grade NAT",
        _ if ip.is_multicast() => "multicast",
        _ if ip.is_broadcast() => "broadcast",
        _ => return None,
    })
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let first = ip.segments()[0];
    Some(match () {
        _ if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) => "metadata",
        _ if ip.is_loopback() => "loopback",
        _ if ip.is_unspecified() => "unspecified",
        _ if (first & 0xffc0) == 0xfe80 => "link-local",
        _ if (first & 0xfe00) == 0xfc00 => "unique-local",
        _ if ip.is_multicast() => "multicast",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(text: &str) -> Option<&'static str> {
        refused(text.parse().unwrap())
    }

    #[test]
    fn the_operators_networks_and_the_metadata_service_are_refused() {
        for (address, expected) in [
            ("127.0.0.1", "loopback"),
            ("127.255.0.9", "loopback"),
            ("0.0.0.0", "unspecified"),
            ("0.1.2.3", "unspecified"),
            ("10.1.2.3", "private"),
            ("172.16.0.1", "private"),
            ("172.31.255.255", "private"),
            ("192.168.1.1", "private"),
            ("169.254.1.1", "link-local"),
            ("169.254.169.254", "metadata"),
            ("100.64.0.1", "carrier-grade NAT"),
            ("100.127.255.255", "carrier-grade NAT"),
            ("224.0.0.1", "multicast"),
            ("255.255.255.255", "broadcast"),
            ("::1", "loopback"),
            ("::", "unspecified"),
            ("fe80::1", "link-local"),
            ("febf::1", "link-local"),
            ("fc00::1", "unique-local"),
            ("fd12:3456::1", "unique-local"),
            ("fd00:ec2::254", "metadata"),
            ("ff02::1", "multicast"),
            ("::ffff:127.0.0.1", "loopback"),
            ("::ffff:10.0.0.1", "private"),
            ("::ffff:169.254.169.254", "metadata"),
        ] {
            assert_eq!(kind(address), Some(expected), "{address}");
        }
    }

    #[test]
    fn public_addresses_next_to_the_refused_ranges_are_allowed() {
        for address in [
            "1.1.1.1",
            "9.255.255.255",
            "11.0.0.0",
            "172.15.255.255",
            "172.32.0.0",
            "192.167.255.255",
            "169.253.255.255",
            "100.63.255.255",
            "100.128.0.0",
            "223.255.255.255",
            "2001:db8::1",
            "2606:4700::1111",
            "fec0::1",
            "fbff::1",
            "::ffff:8.8.8.8",
        ] {
            assert_eq!(kind(address), None, "{address}");
        }
    }
}
