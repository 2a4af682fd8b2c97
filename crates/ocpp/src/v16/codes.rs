//! Status, error and reason enumerations of the charger-initiated messages.

use super::spec_enum::spec_enum;

spec_enum! {
    /// StatusNotification `errorCode`.
    ChargePointErrorCode {
        ConnectorLockFailure = "ConnectorLockFailure",
        EvCommunicationError = "EVCommunicationError",
        GroundFailure = "GroundFailure",
        HighTemperature = "HighTemperature",
        InternalError = "InternalError",
        LocalListConflict = "LocalListConflict",
        NoError = "NoError",
        OtherError = "OtherError",
        OverCurrentFailure = "OverCurrentFailure",
        PowerMeterFailure = "PowerMeterFailure",
        PowerSwitchFailure = "PowerSwitchFailure",
        ReaderFailure = "ReaderFailure",
        ResetFailure = "ResetFailure",
        UnderVoltage = "UnderVoltage",
        OverVoltage = "OverVoltage",
        WeakSignal = "WeakSignal",
    }
}

spec_enum! {
    /// StatusNotification `status`: the connector's (or, for connector 0, the charge point's) state.
    ChargePointStatus {
        Available = "Available",
        Preparing = "Preparing",
        Charging = "Charging",
        SuspendedEvse = "SuspendedEVSE",
        SuspendedEv = "SuspendedEV",
        Finishing = "Finishing",
        Reserved = "Reserved",
        Unavailable = "Unavailable",
        Faulted = "Faulted",
    }
}

spec_enum! {
    /// DiagnosticsStatusNotification `status`.
    DiagnosticsStatus {
        Idle = "Idle",
        Uploaded = "Uploaded",
        UploadFailed = "UploadFailed",
        Uploading = "Uploading",
    }
}

spec_enum! {
    /// FirmwareStatusNotification `status`.
    FirmwareStatus {
        Downloaded = "Downloaded",
        DownloadFailed = "DownloadFailed",
        Downloading = "Downloading",
        Idle = "Idle",
        InstallationFailed = "InstallationFailed",
        Installing = "Installing",
        Installed = "Installed",
    }
}

spec_enum! {
    /// StopTransaction `reason`; absent means `Local`.
    StopReason {
        EmergencyStop = "EmergencyStop",
        EvDisconnected = "EVDisconnected",
        HardReset = "HardReset",
        Local = "Local",
        Other = "Other",
        PowerLoss = "PowerLoss",
        Reboot = "Reboot",
        Remote = "Remote",
        SoftReset = "SoftReset",
        UnlockCommand = "UnlockCommand",
        DeAuthorized = "DeAuthorized",
    }
}
