//! The signed meter readings of a transaction's start or stop (cms_store::signed_values), read
//! only from the rare messages that carry them where Eichrecht meters put them: a 1.6
//! StopTransaction's `transactionData`, a 2.0.1 TransactionEvent Started's or Ended's meter
//! values. MeterValues and Updated events, the hot path, are never read for them.

use cms_ocpp::v16::{Measurand, MeterValue, ReadingContext, ValueFormat};
use cms_store::signed_values::SignedValue;
use serde::Deserialize;

/// The OCPI nature of a reading of this context (`Transaction.Begin`, `Transaction.End`, else
/// an intermediate one).
fn nature(context: Option<&str>) -> &'static str {
    match context {
        Some("Transaction.Begin") => "Start",
        Some("Transaction.End") => "End",
        _ => "Intermediate",
    }
}

/// How a 1.6 signed value is encoded: an OCMF record says so in its first field; anything else
/// is a format 1.6 does not name.
fn encoding_of(signed: &str) -> &'static str {
    if signed.starts_with("OCMF|") {
        "OCMF"
    } else {
        "UNKNOWN"
    }
}

/// A 1.6 StopTransaction's signed values (`format` `SignedData`), each with the plain energy
/// register of its meter value when it has one.
pub(crate) fn of_v16(transaction_data: &[MeterValue<'_>]) -> Vec<SignedValue> {
    let mut values = Vec::new();
    for reading in transaction_data {
        let register = reading.sampled_value.iter().find(|s| {
            s.format() == ValueFormat::Raw && s.measurand() == Measurand::EnergyActiveImportRegister
        });
        let signed =
            (reading.sampled_value.iter()).filter(|s| s.format() == ValueFormat::SignedData);
        for sample in signed {
            let context = sample.context.map(ReadingContext::as_str);
            values.push(SignedValue {
                nature: nature(context).to_string(),
                plain_data: register.map_or(String::new(), |r| r.value.to_string()),
                signed_data: sample.value.to_string(),
                encoding_method: encoding_of(&sample.value).to_string(),
                public_key: None,
            });
        }
    }
    values
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    #[serde(default)]
    meter_value: Vec<Reading>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reading {
    sampled_value: Vec<Sample>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Sample {
    value: serde_json::Number,
    context: Option<String>,
    measurand: Option<String>,
    signed_meter_value: Option<Signed>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Signed {
    signed_meter_data: String,
    encoding_method: String,
    public_key: String,
}

/// A 2.0.1 Started's or Ended's signed values (`signedMeterValue`), each with its sample's
/// value as plain data when the sample is the energy register (the default measurand).
pub(crate) fn of_v201(payload: &str) -> Vec<SignedValue> {
    let Ok(event) = serde_json::from_str::<Event>(payload) else {
        return Vec::new();
    };
    let samples = event.meter_value.into_iter().flat_map(|r| r.sampled_value);
    samples
        .filter_map(|sample| {
            let signed = sample.signed_meter_value?;
            let register =
                (sample.measurand.as_deref()).is_none_or(|m| m == "Energy.Active.Import.Register");
            Some(SignedValue {
                nature: nature(sample.context.as_deref()).to_string(),
                plain_data: if register {
                    sample.value.to_string()
                } else {
                    String::new()
                },
                signed_data: signed.signed_meter_data,
                encoding_method: match signed.encoding_method.as_str() {
                    "" => "UNKNOWN".to_string(),
                    method => method.to_string(),
                },
                public_key: Some(signed.public_key).filter(|k| !k.is_empty()),
            })
        })
        .collect()
}
