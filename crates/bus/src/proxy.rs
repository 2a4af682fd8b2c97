//! A charger's proxy set-up as gateways need it (part of its registry record): the other
//! central systems its traffic is relayed to, and which of them answers it.

use std::sync::Arc;

/// `vendor_role`: who answers the charger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VendorRole {
    /// cms answers; every proxy server is a follower.
    Leader,
    /// The proxy server with role `leader` answers; cms, like the followers, records.
    Follower,
}

impl VendorRole {
    pub fn as_str(self) -> &'static str {
        match self {
            VendorRole::Leader => "ROLE_LEADER",
            VendorRole::Follower => "ROLE_FOLLOWER",
        }
    }

    /// `ROLE_STANDALONE` (no relaying) and anything unknown are `None`.
    pub fn parse(text: &str) -> Option<VendorRole> {
        match text {
            "ROLE_LEADER" => Some(VendorRole::Leader),
            "ROLE_FOLLOWER" => Some(VendorRole::Follower),
            _ => None,
        }
    }
}

/// One upstream central system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    /// `ws://` or `wss://`, perhaps with `user:password@`; the charger's identity is appended.
    pub websocket_url: String,
    /// Answers the charger (only when the charger's vendor role is `ROLE_FOLLOWER`).
    pub leader: bool,
}

/// What a gateway relays a charger to; shared by the charger's session and the registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxySetup {
    pub vendor_role: VendorRole,
    pub upstreams: Arc<[Upstream]>,
}

impl ProxySetup {
    /// The set-up of a charger with `vendor_role` and `servers` (url, role), or `None` when
    /// nothing is relayed: standalone, or no servers.
    pub fn new(vendor_role: Option<&str>, servers: &[(String, String)]) -> Option<ProxySetup> {
        let vendor_role = VendorRole::parse(vendor_role?)?;
        if servers.is_empty() {
            return None;
        }
        let upstreams = servers.iter().map(|(url, role)| Upstream {
            websocket_url: url.clone(),
            leader: vendor_role == VendorRole::Follower && role == "leader",
        });
        Some(ProxySetup {
            vendor_role,
            upstreams: upstreams.collect(),
        })
    }

    pub fn to_json(&self) -> serde_json::Value {
        let servers: Vec<serde_json::Value> = self
            .upstreams
            .iter()
            .map(|u| {
                let role = if u.leader { "leader" } else { "follower" };
                serde_json::json!({"websocket_url": u.websocket_url, "role": role})
            })
            .collect();
        serde_json::json!({"vendor_role": self.vendor_role.as_str(), "servers": servers})
    }

    pub fn from_json(value: &serde_json::Value) -> Option<ProxySetup> {
        let servers: Vec<(String, String)> = value["servers"]
            .as_array()?
            .iter()
            .filter_map(|s| {
                let url = s["websocket_url"].as_str()?.to_string();
                Some((url, s["role"].as_str()?.to_string()))
            })
            .collect();
        ProxySetup::new(value["vendor_role"].as_str(), &servers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(u, r)| (u.to_string(), r.to_string()))
            .collect()
    }

    #[test]
    fn only_a_follower_charger_has_a_leader_upstream() {
        let list = servers(&[
            ("wss://a.example/ocpp", "leader"),
            ("ws://b/ocpp", "follower"),
        ]);
        let follower = ProxySetup::new(Some("ROLE_FOLLOWER"), &list).unwrap();
        assert_eq!(
            follower
                .upstreams
                .iter()
                .map(|u| u.leader)
                .collect::<Vec<_>>(),
            [true, false]
        );
        let leader = ProxySetup::new(Some("ROLE_LEADER"), &list).unwrap();
        assert!(leader.upstreams.iter().all(|u| !u.leader));
        assert_eq!(ProxySetup::new(Some("ROLE_STANDALONE"), &list), None);
        assert_eq!(ProxySetup::new(None, &list), None);
        assert_eq!(ProxySetup::new(Some("ROLE_LEADER"), &[]), None);
        assert_eq!(ProxySetup::from_json(&follower.to_json()), Some(follower));
    }
}
