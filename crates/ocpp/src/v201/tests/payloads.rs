//! Realistic valid 2.0.1 payloads of every handled action (each also checked valid by Python's
//! `jsonschema` Draft6Validator against the same files when written), in the shapes stations
//! send: spec examples, minimal and full.

use crate::v201::Action;

pub(super) const VALID: &[(Action, &str)] = &[
    (
        Action::Authorize,
        r#"{"idToken":{"idToken":"04A2B3C4D5E680","type":"ISO14443"}}"#,
    ),
    (
        Action::Authorize,
        r#"{"idToken":{"idToken":"DE*ABC*C1234567*8","type":"eMAID","additionalInfo":[{"additionalIdToken":"contract-7","type":"ContractId"}]},"iso15118CertificateHashData":[{"hashAlgorithm":"SHA256","issuerNameHash":"a1b2","issuerKeyHash":"c3d4","serialNumber":"01","responderURL":"http://ocsp.example.com"}],"customData":{"vendorId":"com.example","note":{"nested":[1,2]}}}"#,
    ),
    (
        Action::BootNotification,
        r#"{"reason":"PowerUp","chargingStation":{"model":"SingleSocketCharger","vendorName":"VendorX","serialNumber":"SN-0001234","firmwareVersion":"1.2.3","modem":{"iccid":"89310410106543789301","imsi":"310410123456789"}}}"#,
    ),
    (
        Action::BootNotification,
        r#"{"reason":"Watchdog","chargingStation":{"model":"M","vendorName":"V"}}"#,
    ),
    (
        Action::DataTransfer,
        r#"{"vendorId":"com.example","messageId":"diag","data":{"temp":41,"list":[1.5,"x",null,true]}}"#,
    ),
    (Action::DataTransfer, r#"{"vendorId":"com.example"}"#),
    (
        Action::FirmwareStatusNotification,
        r#"{"status":"Installed","requestId":7}"#,
    ),
    (Action::Heartbeat, r#"{}"#),
    (
        Action::LogStatusNotification,
        r#"{"status":"Uploaded","requestId":3}"#,
    ),
    (
        Action::MeterValues,
        r#"{"evseId":1,"meterValue":[{"timestamp":"2026-11-21T10:15:00.000Z","sampledValue":[{"value":15243.7,"context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","location":"Outlet","unitOfMeasure":{"unit":"Wh","multiplier":0}},{"value":16.1,"measurand":"Current.Import","phase":"L1","unitOfMeasure":{"unit":"A"}}]},{"timestamp":"2026-11-21T10:16:00+01:00","sampledValue":[{"value":7}]}]}"#,
    ),
    (
        Action::MeterValues,
        r#"{"evseId":0,"meterValue":[{"timestamp":"2026-11-21T10:15:00Z","sampledValue":[{"value":-1000.0,"signedMeterValue":{"signedMeterData":"T0NNRnx7","signingMethod":"ECDSA-secp256r1-SHA256","encodingMethod":"OCMF","publicKey":"MFkw"}}]}]}"#,
    ),
    (
        Action::NotifyEvent,
        r#"{"generatedAt":"2026-11-21T10:15:00Z","seqNo":0,"tbc":false,"eventData":[{"eventId":1,"timestamp":"2026-11-21T10:15:00Z","trigger":"Delta","actualValue":"Occupied","eventNotificationType":"HardWiredNotification","component":{"name":"Connector","evse":{"id":1,"connectorId":1}},"variable":{"name":"AvailabilityState"}}]}"#,
    ),
    (
        Action::NotifyReport,
        r#"{"requestId":1,"generatedAt":"2026-11-21T10:15:00Z","seqNo":0,"tbc":false,"reportData":[{"component":{"name":"ChargingStation"},"variable":{"name":"Model"},"variableAttribute":[{"type":"Actual","value":"SingleSocketCharger","mutability":"ReadOnly","persistent":true,"constant":true}],"variableCharacteristics":{"dataType":"string","supportsMonitoring":false}}]}"#,
    ),
    (
        Action::SecurityEventNotification,
        r#"{"type":"StartupOfTheDevice","timestamp":"2026-11-21T10:15:00Z","techInfo":"cold boot"}"#,
    ),
    (
        Action::ClearedChargingLimit,
        r#"{"chargingLimitSource":"EMS","evseId":1}"#,
    ),
    (
        Action::NotifyChargingLimit,
        r#"{"chargingLimit":{"chargingLimitSource":"SO","isGridCritical":true},"evseId":1}"#,
    ),
    (
        Action::NotifyDisplayMessages,
        r#"{"requestId":4,"tbc":false,"messageInfo":[{"id":1,"priority":"NormalCycle","message":{"format":"UTF8","content":"Welcome"}}]}"#,
    ),
    (
        Action::NotifyEVChargingNeeds,
        r#"{"evseId":1,"maxScheduleTuples":3,"chargingNeeds":{"requestedEnergyTransfer":"AC_three_phase","acChargingParameters":{"energyAmount":20000,"evMinCurrent":6,"evMaxCurrent":32,"evMaxVoltage":400}}}"#,
    ),
    (
        Action::NotifyEVChargingSchedule,
        r#"{"timeBase":"2026-11-21T10:15:00Z","evseId":1,"chargingSchedule":{"id":1,"chargingRateUnit":"A","chargingSchedulePeriod":[{"startPeriod":0,"limit":16.0}]}}"#,
    ),
    (
        Action::ReportChargingProfiles,
        r#"{"requestId":7,"chargingLimitSource":"CSO","tbc":false,"evseId":0,"chargingProfile":[{"id":1,"stackLevel":0,"chargingProfilePurpose":"ChargingStationMaxProfile","chargingProfileKind":"Absolute","chargingSchedule":[{"id":1,"chargingRateUnit":"A","chargingSchedulePeriod":[{"startPeriod":0,"limit":32.0}]}]}]}"#,
    ),
    (
        Action::ReservationStatusUpdate,
        r#"{"reservationId":12,"reservationUpdateStatus":"Expired"}"#,
    ),
    (
        Action::SignCertificate,
        r#"{"csr":"-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----","certificateType":"ChargingStationCertificate"}"#,
    ),
    (
        Action::StatusNotification,
        r#"{"timestamp":"2026-11-21T10:15:00Z","connectorStatus":"Occupied","evseId":1,"connectorId":1}"#,
    ),
    (
        Action::StatusNotification,
        r#"{"connectorId":2,"evseId":99,"connectorStatus":"Faulted","timestamp":"2026-11-21T11:15:00.5+01:00"}"#,
    ),
    (
        Action::TransactionEvent,
        r#"{"eventType":"Started","timestamp":"2026-11-21T10:15:00Z","triggerReason":"Authorized","seqNo":0,"transactionInfo":{"transactionId":"f8a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8","chargingState":"EVConnected","remoteStartId":42},"idToken":{"idToken":"04A2B3C4D5E680","type":"ISO14443"},"evse":{"id":1,"connectorId":1},"meterValue":[{"timestamp":"2026-11-21T10:15:00Z","sampledValue":[{"value":15243.7,"context":"Transaction.Begin","measurand":"Energy.Active.Import.Register","unitOfMeasure":{"unit":"Wh"}}]}]}"#,
    ),
    (
        Action::TransactionEvent,
        r#"{"eventType":"Updated","timestamp":"2026-11-21T10:30:00Z","triggerReason":"MeterValuePeriodic","seqNo":3,"offline":true,"transactionInfo":{"transactionId":"f8a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8","chargingState":"Charging"},"meterValue":[{"timestamp":"2026-11-21T10:29:00Z","sampledValue":[{"value":15000}]},{"timestamp":"2026-11-21T10:30:00Z","sampledValue":[{"value":15243.7,"measurand":"Energy.Active.Import.Register"},{"value":11040,"measurand":"Power.Active.Import","unitOfMeasure":{"unit":"W"}}]}]}"#,
    ),
    (
        Action::TransactionEvent,
        r#"{"eventType":"Ended","timestamp":"2026-11-21T11:15:00Z","triggerReason":"EVCommunicationLost","seqNo":9,"transactionInfo":{"transactionId":"tx-7","stoppedReason":"EVDisconnected"},"numberOfPhasesUsed":3,"cableMaxCurrent":32,"reservationId":5}"#,
    ),
    // Escapes, whitespace and members in any order.
    (
        Action::Authorize,
        r#" { "idToken" : { "type" : "Central" , "idToken" : "caf\u00e9-\"7\"" } } "#,
    ),
    (
        Action::TransactionEvent,
        "{\"seqNo\":1,\"transactionInfo\":{\"transactionId\":\"tx\\/8\"},\"triggerReason\":\"RemoteStart\",\n\"timestamp\":\"2026-11-21T10:15:00\",\"eventType\":\"Updated\",\"evse\":{\"id\":2}}",
    ),
];
