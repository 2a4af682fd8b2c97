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
    /// Actions for chargers, each addressed to one session; written by the API, followed by
    /// every gateway.
    pub commands: &'static str,
    /// Each change of an action's state; written by gateways, read by the API.
    pub command_results: &'static str,
    /// The teams' id tags (compacted: the last record per team and tag is its state); written by
    /// the API, read by every gateway from the beginning.
    pub id_tags: &'static str,
}

impl Topics {
    /// `<prefix>.ocpp.messages`, `<prefix>.ocpp.connections`, `<prefix>.chargers.registry`,
    /// `<prefix>.ocpp.commands`, `<prefix>.ocpp.command-results` and `<prefix>.id-tags`.
    pub fn with_prefix(prefix: &str) -> Topics {
        // Topic names live as long as the process; leaking two short strings once saves a copy
        // of the topic name in every record.
        let leak = |name: String| -> &'static str { Box::leak(name.into_boxed_str()) };
        Topics {
            messages: leak(format!("{prefix}.ocpp.messages")),
            connections: leak(format!("{prefix}.ocpp.connections")),
            registry: leak(format!("{prefix}.chargers.registry")),
            commands: leak(format!("{prefix}.ocpp.commands")),
            command_results: leak(format!("{prefix}.ocpp.command-results")),
            id_tags: leak(format!("{prefix}.id-tags")),
        }
    }

    /// Every topic but the registry and the id tags (which only the Kafka deployment needs).
    pub fn all(&self) -> [&'static str; 4] {
        [
            self.messages,
            self.connections,
            self.commands,
            self.command_results,
        ]
    }

    /// What the API's consumer group reads: the charger traffic and the actions' reports.
    pub fn consumed_by_api(&self) -> [&'static str; 3] {
        [self.messages, self.connections, self.command_results]
    }
}
