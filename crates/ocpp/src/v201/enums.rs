//! The 2.0.1 enumerations cms reads or answers with, spelled as the 2.0.1 schemas spell them.

use crate::v16::spec_enum::spec_enum;

spec_enum! {
    /// AuthorizationStatusEnumType: the status of an idToken cms answers with.
    AuthorizationStatus {
        Accepted = "Accepted",
        Blocked = "Blocked",
        ConcurrentTx = "ConcurrentTx",
        Expired = "Expired",
        Invalid = "Invalid",
        NoCredit = "NoCredit",
        NotAllowedTypeEVSE = "NotAllowedTypeEVSE",
        NotAtThisLocation = "NotAtThisLocation",
        NotAtThisTime = "NotAtThisTime",
        Unknown = "Unknown",
    }
}

spec_enum! {
    /// RegistrationStatusEnumType: cms's answer to a BootNotification.
    RegistrationStatus {
        Accepted = "Accepted",
        Pending = "Pending",
        Rejected = "Rejected",
    }
}

spec_enum! {
    /// BootReasonEnumType: why a station booted.
    BootReason {
        ApplicationReset = "ApplicationReset",
        FirmwareUpdate = "FirmwareUpdate",
        LocalReset = "LocalReset",
        PowerUp = "PowerUp",
        RemoteReset = "RemoteReset",
        ScheduledReset = "ScheduledReset",
        Triggered = "Triggered",
        Unknown = "Unknown",
        Watchdog = "Watchdog",
    }
}

spec_enum! {
    /// ConnectorStatusEnumType: a connector's status in a StatusNotification.
    ConnectorStatus {
        Available = "Available",
        Occupied = "Occupied",
        Reserved = "Reserved",
        Unavailable = "Unavailable",
        Faulted = "Faulted",
    }
}

spec_enum! {
    /// TransactionEventEnumType: where in its transaction a TransactionEvent is.
    TransactionEventType {
        Ended = "Ended",
        Started = "Started",
        Updated = "Updated",
    }
}
