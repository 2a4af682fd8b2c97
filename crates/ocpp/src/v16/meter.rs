//! MeterValues and the MeterValue/SampledValue shapes StopTransaction reuses.

mod stream;
#[cfg(test)]
mod tests;

pub use stream::read_meter_values;
pub(crate) use stream::{check_meter_values as stream_check, meter_values as stream_meter_values};

use std::borrow::Cow;

use chrono::{DateTime, Utc};

use super::extract::{Obj, Path, UNBOUNDED, connector_id, integer, violation};
use super::measurement::{Location, Measurand, Phase, ReadingContext, UnitOfMeasure, ValueFormat};
use crate::error::{ErrorCode, Violation};
use crate::json::Json;

/// MeterValues.req: periodic or triggered samples of one connector (0 = main meter).
#[derive(Debug, Clone, PartialEq)]
pub struct MeterValuesRequest<'a> {
    pub connector_id: u32,
    pub transaction_id: Option<i32>,
    pub meter_value: Vec<MeterValue<'a>>,
}

/// What the gateway keeps of a valid MeterValues request: every sample is checked, none is
/// kept (the payload goes on as the charger's own bytes), so the check allocates nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MeterValuesCheck {
    pub connector_id: u32,
    pub transaction_id: Option<i32>,
    /// The newest of the meter values' timestamps.
    pub newest: Option<DateTime<Utc>>,
}

impl MeterValuesCheck {
    pub fn of(request: &MeterValuesRequest<'_>) -> Self {
        MeterValuesCheck {
            connector_id: request.connector_id,
            transaction_id: request.transaction_id,
            newest: request.meter_value.iter().map(|v| v.timestamp).max(),
        }
    }
}

/// The samples taken at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct MeterValue<'a> {
    pub timestamp: DateTime<Utc>,
    pub sampled_value: Vec<SampledValue<'a>>,
}

/// One measured value; absent attributes take the spec defaults via the methods.
#[derive(Debug, Clone, PartialEq)]
pub struct SampledValue<'a> {
    /// The reading as sent: a decimal number for `Raw`, opaque text for `SignedData`.
    pub value: Cow<'a, str>,
    pub context: Option<ReadingContext>,
    pub format: Option<ValueFormat>,
    pub measurand: Option<Measurand>,
    pub phase: Option<Phase>,
    pub location: Option<Location>,
    pub unit: Option<UnitOfMeasure>,
}

impl SampledValue<'_> {
    pub fn context(&self) -> ReadingContext {
        self.context.unwrap_or(ReadingContext::SamplePeriodic)
    }

    pub fn format(&self) -> ValueFormat {
        self.format.unwrap_or(ValueFormat::Raw)
    }

    pub fn measurand(&self) -> Measurand {
        self.measurand
            .unwrap_or(Measurand::EnergyActiveImportRegister)
    }

    pub fn location(&self) -> Location {
        self.location.unwrap_or(Location::Outlet)
    }

    pub fn unit(&self) -> UnitOfMeasure {
        self.unit.unwrap_or(UnitOfMeasure::Wh)
    }
}

/// The MeterValues and StopTransaction schemas describe meter values slightly
/// differently; each is followed as written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MeterSchema {
    /// MeterValues demands at least one meterValue and one sampledValue.
    min_items: usize,
    /// Only the MeterValues schema lists the `Hertz` unit.
    hertz: bool,
}

pub(crate) const METER_VALUES_SCHEMA: MeterSchema = MeterSchema {
    min_items: 1,
    hertz: true,
};

pub(crate) const TRANSACTION_DATA_SCHEMA: MeterSchema = MeterSchema {
    min_items: 0,
    hertz: false,
};

impl<'a> MeterValuesRequest<'a> {
    pub fn from_json(json: Json<'a>) -> Result<Self, Violation> {
        let mut o = Obj::new(
            json,
            &Path::Root,
            &["connectorId", "transactionId", "meterValue"],
        )?;
        let schema = METER_VALUES_SCHEMA;
        Ok(MeterValuesRequest {
            connector_id: o.required("connectorId", |v, p| connector_id(v, p, 0))?,
            transaction_id: o.optional("transactionId", integer)?,
            meter_value: o.list("meterValue", true, schema.min_items, |v, p| {
                MeterValue::from_json(v, p, schema)
            })?,
        })
    }
}

impl<'a> MeterValue<'a> {
    pub(crate) fn from_json(
        json: Json<'a>,
        path: &Path<'_>,
        schema: MeterSchema,
    ) -> Result<Self, Violation> {
        let mut o = Obj::new(json, path, &["timestamp", "sampledValue"])?;
        Ok(MeterValue {
            timestamp: o.required_timestamp("timestamp")?,
            sampled_value: o.list("sampledValue", true, schema.min_items, |v, p| {
                SampledValue::from_json(v, p, schema)
            })?,
        })
    }
}

const SAMPLED_VALUE_FIELDS: [&str; 7] = [
    "value",
    "context",
    "format",
    "measurand",
    "phase",
    "location",
    "unit",
];

impl<'a> SampledValue<'a> {
    fn from_json(json: Json<'a>, path: &Path<'_>, schema: MeterSchema) -> Result<Self, Violation> {
        let mut o = Obj::new(json, path, &SAMPLED_VALUE_FIELDS)?;
        Ok(SampledValue {
            value: o.required_str("value", UNBOUNDED)?,
            context: o.optional_enum("context")?,
            format: o.optional_enum("format")?,
            measurand: o.optional_enum("measurand")?,
            phase: o.optional_enum("phase")?,
            location: o.optional_enum("location")?,
            unit: o.optional("unit", |v, p| unit(v, p, schema))?,
        })
    }
}

fn unit(v: Json<'_>, path: &Path<'_>, schema: MeterSchema) -> Result<UnitOfMeasure, Violation> {
    match super::extract::enumeration(v, path)? {
        UnitOfMeasure::Hertz if !schema.hertz => Err(violation(
            ErrorCode::PropertyConstraintViolation,
            path,
            format_args!("unknown value \"Hertz\""),
        )),
        unit => Ok(unit),
    }
}
