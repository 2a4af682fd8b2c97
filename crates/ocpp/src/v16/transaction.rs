//! Authorize, StartTransaction and StopTransaction: a charging session's life cycle.

#[cfg(test)]
mod tests;

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use super::codes::StopReason;
use super::extract::{Obj, Path, connector_id, integer};
use super::meter::{MeterValue, TRANSACTION_DATA_SCHEMA};
use crate::error::Violation;
use crate::json::Json;

/// Longest `idTag` (an RFID UID or other token), in characters.
pub const ID_TAG_MAX_LEN: usize = 20;

/// Authorize.req: may this token charge?
#[derive(Debug, Clone, PartialEq)]
pub struct AuthorizeRequest<'a> {
    pub id_tag: Cow<'a, str>,
}

impl<'a> AuthorizeRequest<'a> {
    pub fn from_json(json: Json<'a>) -> Result<Self, Violation> {
        let mut o = Obj::new(json, &Path::Root, &["idTag"])?;
        Ok(AuthorizeRequest {
            id_tag: o.required_str("idTag", ID_TAG_MAX_LEN)?,
        })
    }
}

/// StartTransaction.req: a session began on a connector.
#[derive(Debug, Clone, PartialEq)]
pub struct StartTransactionRequest<'a> {
    /// At least 1: a transaction always runs on a real connector.
    pub connector_id: u32,
    pub id_tag: Cow<'a, str>,
    /// Meter reading in Wh at the start.
    pub meter_start: i32,
    pub reservation_id: Option<i32>,
    pub timestamp: DateTime<Utc>,
}

impl<'a> StartTransactionRequest<'a> {
    pub fn from_json(json: Json<'a>) -> Result<Self, Violation> {
        let names = &[
            "connectorId",
            "idTag",
            "meterStart",
            "reservationId",
            "timestamp",
        ];
        let mut o = Obj::new(json, &Path::Root, names)?;
        Ok(StartTransactionRequest {
            // The 1.6 spec text requires connectorId > 0 here (0 is the charge point itself).
            connector_id: o.required("connectorId", |v, p| connector_id(v, p, 1))?,
            id_tag: o.required_str("idTag", ID_TAG_MAX_LEN)?,
            meter_start: o.required("meterStart", integer)?,
            reservation_id: o.optional("reservationId", integer)?,
            timestamp: o.required_timestamp("timestamp")?,
        })
    }
}

/// StopTransaction.req: a session ended, possibly with the meter values it collected.
#[derive(Debug, Clone, PartialEq)]
pub struct StopTransactionRequest<'a> {
    pub id_tag: Option<Cow<'a, str>>,
    /// Meter reading in Wh at the end.
    pub meter_stop: i32,
    pub timestamp: DateTime<Utc>,
    pub transaction_id: i32,
    pub reason: Option<StopReason>,
    /// Empty when the charger sent none.
    pub transaction_data: Vec<MeterValue<'a>>,
}

impl StopTransactionRequest<'_> {
    /// The reason, with the spec default `Local` when absent.
    pub fn reason(&self) -> StopReason {
        self.reason.unwrap_or(StopReason::Local)
    }
}

const STOP_FIELDS: [&str; 6] = [
    "idTag",
    "meterStop",
    "timestamp",
    "transactionId",
    "reason",
    "transactionData",
];

impl<'a> StopTransactionRequest<'a> {
    pub fn from_json(json: Json<'a>) -> Result<Self, Violation> {
        let mut o = Obj::new(json, &Path::Root, &STOP_FIELDS)?;
        let schema = TRANSACTION_DATA_SCHEMA;
        Ok(StopTransactionRequest {
            id_tag: o.optional_str("idTag", ID_TAG_MAX_LEN)?,
            meter_stop: o.required("meterStop", integer)?,
            timestamp: o.required_timestamp("timestamp")?,
            transaction_id: o.required("transactionId", integer)?,
            reason: o.optional_enum("reason")?,
            transaction_data: o.list("transactionData", false, 0, |v, p| {
                MeterValue::from_json(v, p, schema)
            })?,
        })
    }
}
