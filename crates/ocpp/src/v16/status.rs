//! StatusNotification, DiagnosticsStatusNotification and FirmwareStatusNotification.

#[cfg(test)]
mod tests;

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use super::codes::{ChargePointErrorCode, ChargePointStatus, DiagnosticsStatus, FirmwareStatus};
use super::extract::{Obj, Path, connector_id, timestamp};
use crate::error::Violation;
use crate::json::Json;

/// StatusNotification.req: a connector (or, for connector 0, the charge point) changed state.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusNotificationRequest<'a> {
    pub connector_id: u32,
    pub error_code: ChargePointErrorCode,
    pub info: Option<Cow<'a, str>>,
    pub status: ChargePointStatus,
    pub timestamp: Option<DateTime<Utc>>,
    pub vendor_id: Option<Cow<'a, str>>,
    pub vendor_error_code: Option<Cow<'a, str>>,
}

const STATUS_FIELDS: [&str; 7] = [
    "connectorId",
    "errorCode",
    "info",
    "status",
    "timestamp",
    "vendorId",
    "vendorErrorCode",
];

impl<'a> StatusNotificationRequest<'a> {
    pub fn from_json(json: Json<'a>) -> Result<Self, Violation> {
        let mut o = Obj::new(json, &Path::Root, &STATUS_FIELDS)?;
        Ok(StatusNotificationRequest {
            connector_id: o.required("connectorId", |v, p| connector_id(v, p, 0))?,
            error_code: o.required_enum("errorCode")?,
            info: o.optional_str("info", 50)?,
            status: o.required_enum("status")?,
            timestamp: o.optional("timestamp", timestamp)?,
            vendor_id: o.optional_str("vendorId", 255)?,
            vendor_error_code: o.optional_str("vendorErrorCode", 50)?,
        })
    }
}

/// DiagnosticsStatusNotification.req: progress of a diagnostics upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiagnosticsStatusNotificationRequest {
    pub status: DiagnosticsStatus,
}

impl DiagnosticsStatusNotificationRequest {
    pub fn from_json(json: Json<'_>) -> Result<Self, Violation> {
        let mut o = Obj::new(json, &Path::Root, &["status"])?;
        Ok(DiagnosticsStatusNotificationRequest {
            status: o.required_enum("status")?,
        })
    }
}

/// FirmwareStatusNotification.req: progress of a firmware update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FirmwareStatusNotificationRequest {
    pub status: FirmwareStatus,
}

impl FirmwareStatusNotificationRequest {
    pub fn from_json(json: Json<'_>) -> Result<Self, Violation> {
        let mut o = Obj::new(json, &Path::Root, &["status"])?;
        Ok(FirmwareStatusNotificationRequest {
            status: o.required_enum("status")?,
        })
    }
}
