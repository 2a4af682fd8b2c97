//! BootNotification, Heartbeat and DataTransfer: the charge point's own housekeeping.

#[cfg(test)]
mod tests;

use std::borrow::Cow;

use super::extract::{Obj, Path, UNBOUNDED};
use crate::error::Violation;
use crate::json::Json;

/// BootNotification.req: the charge point (re)started and introduces itself.
#[derive(Debug, Clone, PartialEq)]
pub struct BootNotificationRequest<'a> {
    pub charge_point_vendor: Cow<'a, str>,
    pub charge_point_model: Cow<'a, str>,
    pub charge_point_serial_number: Option<Cow<'a, str>>,
    pub charge_box_serial_number: Option<Cow<'a, str>>,
    pub firmware_version: Option<Cow<'a, str>>,
    pub iccid: Option<Cow<'a, str>>,
    pub imsi: Option<Cow<'a, str>>,
    pub meter_type: Option<Cow<'a, str>>,
    pub meter_serial_number: Option<Cow<'a, str>>,
}

const BOOT_FIELDS: [&str; 9] = [
    "chargePointVendor",
    "chargePointModel",
    "chargePointSerialNumber",
    "chargeBoxSerialNumber",
    "firmwareVersion",
    "iccid",
    "imsi",
    "meterType",
    "meterSerialNumber",
];

impl<'a> BootNotificationRequest<'a> {
    pub fn from_json(json: Json<'a>) -> Result<Self, Violation> {
        let mut o = Obj::new(json, &Path::Root, &BOOT_FIELDS)?;
        Ok(BootNotificationRequest {
            charge_point_vendor: o.required_str("chargePointVendor", 20)?,
            charge_point_model: o.required_str("chargePointModel", 20)?,
            charge_point_serial_number: o.optional_str("chargePointSerialNumber", 25)?,
            charge_box_serial_number: o.optional_str("chargeBoxSerialNumber", 25)?,
            firmware_version: o.optional_str("firmwareVersion", 50)?,
            iccid: o.optional_str("iccid", 20)?,
            imsi: o.optional_str("imsi", 20)?,
            meter_type: o.optional_str("meterType", 25)?,
            meter_serial_number: o.optional_str("meterSerialNumber", 25)?,
        })
    }
}

/// Heartbeat.req carries nothing, but must still be an empty object.
pub(crate) fn check_heartbeat(json: Json<'_>) -> Result<(), Violation> {
    Obj::new(json, &Path::Root, &[]).map(|_| ())
}

/// DataTransfer.req: vendor-specific data, opaque to the CMS.
#[derive(Debug, Clone, PartialEq)]
pub struct DataTransferRequest<'a> {
    pub vendor_id: Cow<'a, str>,
    pub message_id: Option<Cow<'a, str>>,
    /// A string per the schema; vendors often embed JSON text in it.
    pub data: Option<Cow<'a, str>>,
}

impl<'a> DataTransferRequest<'a> {
    pub fn from_json(json: Json<'a>) -> Result<Self, Violation> {
        let mut o = Obj::new(json, &Path::Root, &["vendorId", "messageId", "data"])?;
        Ok(DataTransferRequest {
            vendor_id: o.required_str("vendorId", 255)?,
            message_id: o.optional_str("messageId", 50)?,
            data: o.optional_str("data", UNBOUNDED)?,
        })
    }
}
