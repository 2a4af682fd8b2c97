//! The names of the wire contract between gateways and their consumers: every record header,
//! and the version of the record schema. A second protocol's gateway writes the same names.

/// The version of the records' schema (headers and JSON values), independent of the OCPP
/// version a charger speaks (the `ocpp_version` header). Raised when a field changes meaning
/// or a consumer must learn something new; adding an optional field keeps it. Carried as the
/// `contract_version` header of connection events and gateway beacons (rare records, so the
/// header costs nothing per charger frame); a record without it is of version 1.
pub const CONTRACT_VERSION: u32 = 1;

/// The contract version as header text.
pub const CONTRACT_VERSION_TEXT: &str = "1";

/// Record header names (docs/bus.md).
pub mod header {
    /// The OCPP action of a charger message, a command or a report.
    pub const ACTION: &str = "action";
    /// The charger's message id.
    pub const MESSAGE_ID: &str = "message_id";
    /// When the gateway received the frame (or made the event), in record time form.
    pub const RECEIVED_AT: &str = "received_at";
    /// The node id of the gateway.
    pub const GATEWAY: &str = "gateway";
    /// The websocket session a record came on.
    pub const SESSION: &str = "session";
    /// The OCPP version the charger speaks, e.g. `ocpp1.6`.
    pub const OCPP_VERSION: &str = "ocpp_version";
    /// On MeterValues: the payload's connectorId.
    pub const CONNECTOR_ID: &str = "connector_id";
    /// On MeterValues: the newest sample's time, in record time form.
    pub const MEASURED_AT: &str = "measured_at";
    /// On StartTransaction: the transactionId the gateway answered with.
    pub const TRANSACTION_ID: &str = "transaction_id";
    /// On StartTransaction: the idTagInfo status the gateway answered with.
    pub const ID_TAG_STATUS: &str = "id_tag_status";
    /// On a 2.0.1 TransactionEvent: its `eventType` (`Started`, `Updated`, `Ended`).
    pub const EVENT_TYPE: &str = "event_type";
    /// On connection events: which event (`connected`, ..., `gateway_alive`).
    pub const EVENT: &str = "event";
    /// On reports: where the action stands.
    pub const STATUS: &str = "status";
    /// On a request for a charger's frames (`frames_request`, commands topic) and its answer
    /// (`frames`, command results): what the record is. An action and its reports have none.
    pub const KIND: &str = "kind";
    /// On connection events and beacons: [`super::CONTRACT_VERSION`].
    pub const CONTRACT_VERSION: &str = "contract_version";
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_version_text_is_the_version() {
        assert_eq!(
            super::CONTRACT_VERSION.to_string(),
            super::CONTRACT_VERSION_TEXT
        );
    }
}
