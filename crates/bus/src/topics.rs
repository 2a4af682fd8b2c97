//! Topic names, derived from one prefix so that several deployments can share a cluster.

/// The topics gateways write and API replicas read: the contract between them.
#[derive(Debug, Clone, Copy)]
pub struct Topics {
    /// Every CALL a charger sent and the gateway accepted; value = the charger's payload bytes.
    pub messages: &'static str,
    /// Connect and disconnect events; value = a JSON document.
    pub connections: &'static str,
    /// The chargers allowed to connect (compacted: the last record per identity is its state);
    /// written by the API, read by every gateway from the beginning.
    pub registry: &'static str,
}

impl Topics {
    /// `<prefix>.ocpp.messages`, `<prefix>.ocpp.connections` and `<prefix>.chargers.registry`.
    pub fn with_prefix(prefix: &str) -> Topics {
        // Topic names live as long as the process; leaking two short strings once saves a copy
        // of the topic name in every record.
        let leak = |name: String| -> &'static str { Box::leak(name.into_boxed_str()) };
        Topics {
            messages: leak(format!("{prefix}.ocpp.messages")),
            connections: leak(format!("{prefix}.ocpp.connections")),
            registry: leak(format!("{prefix}.chargers.registry")),
        }
    }

    /// The topics of charger traffic, which the API consumes as a group.
    pub fn all(&self) -> [&'static str; 2] {
        [self.messages, self.connections]
    }
}
