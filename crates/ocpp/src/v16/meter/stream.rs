//! MeterValues read straight from the JSON text, no tree in between: the hot path of the
//! gateway (most frames a fleet sends are meter values). Each value is checked as it is read,
//! by the same rules as [`MeterValuesRequest::from_json`]; at the first thing those rules
//! would refuse, or anything unusual (a repeated key, a null), this reader gives up and the
//! caller takes the tree path, which names the violation exactly. So the two never disagree:
//! what this accepts, the tree path accepts with the same result (the `ocpp_request` fuzz
//! target checks it), and every refusal still comes from the tree path.
//!
//! Measured against the tree path in docs/performance.md ("Frame path").

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use chrono::{DateTime, Utc};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use super::{MeterValue, MeterValuesCheck, MeterValuesRequest, SampledValue};
use crate::json::Key;
use crate::v16::extract::MAX_CONNECTOR_ID;
use crate::v16::spec_enum::SpecEnum;
use crate::v16::timestamp::parse_timestamp;

/// The request, or `None` when the tree path must decide (refusal or anything unusual).
pub(crate) fn meter_values(payload: &str) -> Option<MeterValuesRequest<'_>> {
    let mut de = serde_json::Deserializer::from_str(payload);
    let request = read_meter_values(&mut de).ok()?;
    de.end().ok()?;
    Some(request)
}

/// The check of a request, read as [`meter_values`] reads it but keeping nothing of its lists
/// (so nothing is allocated), or `None` when the tree path must decide.
pub(crate) fn check_meter_values(payload: &str) -> Option<MeterValuesCheck> {
    let mut de = serde_json::Deserializer::from_str(payload);
    let (connector_id, transaction_id, Newest(newest)) =
        serde::Deserializer::deserialize_map(&mut de, RequestVisitor::<Check>(PhantomData)).ok()?;
    de.end().ok()?;
    Some(MeterValuesCheck {
        connector_id,
        transaction_id,
        newest,
    })
}

/// The same reader on any serde deserializer (the bench runs it on simd-json's too).
pub fn read_meter_values<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<MeterValuesRequest<'de>, D::Error> {
    let (connector_id, transaction_id, meter_value) =
        d.deserialize_map(RequestVisitor::<Whole>(PhantomData))?;
    Ok(MeterValuesRequest {
        connector_id,
        transaction_id,
        meter_value,
    })
}

/// What the reader keeps of the lists it reads: the same checks either way, only the keeping
/// differs.
trait Keeping<'de> {
    type Samples: Keep<SampledValue<'de>>;
    type MeterValue;
    type MeterValues: Keep<Self::MeterValue>;
    fn meter_value(timestamp: DateTime<Utc>, samples: Self::Samples) -> Self::MeterValue;
}

/// Every item, as the request's lists.
struct Whole;

impl<'de> Keeping<'de> for Whole {
    type Samples = Vec<SampledValue<'de>>;
    type MeterValue = MeterValue<'de>;
    type MeterValues = Vec<MeterValue<'de>>;

    fn meter_value(timestamp: DateTime<Utc>, sampled_value: Self::Samples) -> MeterValue<'de> {
        MeterValue {
            timestamp,
            sampled_value,
        }
    }
}

/// Only what the gateway needs: the newest timestamp.
struct Check;

impl<'de> Keeping<'de> for Check {
    type Samples = Any;
    type MeterValue = DateTime<Utc>;
    type MeterValues = Newest;

    fn meter_value(timestamp: DateTime<Utc>, _: Any) -> DateTime<Utc> {
        timestamp
    }
}

/// Where the items of a list go as they are read.
trait Keep<T>: Default {
    fn keep(&mut self, item: T);
    fn is_empty(&self) -> bool;
}

impl<T> Keep<T> for Vec<T> {
    fn keep(&mut self, item: T) {
        // Most readings hold one meter value of a few samples: the first push makes room
        // for four.
        self.push(item);
    }

    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

/// Whether there was an item.
#[derive(Default)]
struct Any(bool);

impl<T> Keep<T> for Any {
    fn keep(&mut self, _: T) {
        self.0 = true;
    }

    fn is_empty(&self) -> bool {
        !self.0
    }
}

/// The newest of the timestamps read.
#[derive(Default)]
struct Newest(Option<DateTime<Utc>>);

impl Keep<DateTime<Utc>> for Newest {
    fn keep(&mut self, at: DateTime<Utc>) {
        self.0 = self.0.max(Some(at));
    }

    fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// Why the reader gave up: never shown (the tree path gives the reason), so it carries none.
#[derive(Debug)]
struct GiveUp;

fn give_up<E: de::Error, T>() -> Result<T, E> {
    Err(E::custom(GiveUp))
}

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to the tree path")
    }
}

/// Stores a field's value, giving up if the key came before (the tree path keeps the last).
fn once<T, E: de::Error>(slot: &mut Option<T>, value: T) -> Result<(), E> {
    match slot.replace(value) {
        None => Ok(()),
        Some(_) => give_up(),
    }
}

/// Reads the request: its connector, its transaction and its meter values as `K` keeps them.
struct RequestVisitor<K>(PhantomData<K>);

impl<'de, K: Keeping<'de>> Visitor<'de> for RequestVisitor<K> {
    type Value = (u32, Option<i32>, K::MeterValues);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a MeterValues request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut connector_id, mut transaction_id, mut meter_value) = (None, None, None);
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "connectorId" => {
                    let Integer(id) = map.next_value()?;
                    match u32::try_from(id) {
                        Ok(id) if id <= MAX_CONNECTOR_ID => once(&mut connector_id, id)?,
                        _ => return give_up(),
                    }
                }
                "transactionId" => {
                    let Integer(id) = map.next_value()?;
                    let id = i32::try_from(id).or_else(|_| give_up())?;
                    once(&mut transaction_id, id)?;
                }
                "meterValue" => {
                    let list = map.next_value_seed(List::<_, K::MeterValues>::of(
                        MeterValueSeed::<K>(PhantomData),
                    ))?;
                    once(&mut meter_value, list)?;
                }
                _ => return give_up(),
            }
        }
        match (connector_id, meter_value) {
            (Some(connector_id), Some(meter_value)) => {
                Ok((connector_id, transaction_id, meter_value))
            }
            _ => give_up(),
        }
    }
}

/// A JSON integer (not a float, whatever its value) as `i64`.
struct Integer(i64);

impl<'de> de::Deserialize<'de> for Integer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Asked for an integer, not for any value: with serde_json's `arbitrary_precision` on
        // (the `cms` binary has it, see crates/gateway/Cargo.toml) "any" reads a number's text
        // into a string of its own first, an allocation per number; an integer is parsed in
        // place. Anything else (a float, a string) still fails here, and the tree path names it.
        d.deserialize_i64(IntegerVisitor)
    }
}

struct IntegerVisitor;

impl Visitor<'_> for IntegerVisitor {
    type Value = Integer;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an integer")
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Integer, E> {
        i64::try_from(u).map(Integer).or_else(|_| give_up())
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Integer, E> {
        Ok(Integer(i))
    }
}

/// A non-empty array whose items `T` reads and `K` keeps (the MeterValues schema asks for one
/// item at least).
struct List<T, K>(T, PhantomData<K>);

impl<T, K> List<T, K> {
    fn of(items: T) -> Self {
        List(items, PhantomData)
    }
}

impl<'de, T: DeserializeSeed<'de> + Copy, K: Keep<T::Value>> DeserializeSeed<'de> for List<T, K> {
    type Value = K;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, T: DeserializeSeed<'de> + Copy, K: Keep<T::Value>> Visitor<'de> for List<T, K> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut kept = K::default();
        while let Some(item) = seq.next_element_seed(self.0)? {
            kept.keep(item);
        }
        match kept.is_empty() {
            true => give_up(),
            false => Ok(kept),
        }
    }
}

/// Reads one meterValue, its samples as `K` keeps them.
struct MeterValueSeed<K>(PhantomData<K>);

// Derived `Clone` would ask `K: Clone`; the seed holds no `K`.
impl<K> Clone for MeterValueSeed<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for MeterValueSeed<K> {}

impl<'de, K: Keeping<'de>> DeserializeSeed<'de> for MeterValueSeed<K> {
    type Value = K::MeterValue;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, K: Keeping<'de>> Visitor<'de> for MeterValueSeed<K> {
    type Value = K::MeterValue;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a meterValue")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut timestamp, mut sampled_value) = (None, None);
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "timestamp" => {
                    let Key(text) = map.next_value()?;
                    let at = parse_timestamp(&text).map_or_else(give_up, Ok)?;
                    once(&mut timestamp, at)?;
                }
                "sampledValue" => {
                    let list = map.next_value_seed(List::<_, K::Samples>::of(SampledValueSeed))?;
                    once(&mut sampled_value, list)?;
                }
                _ => return give_up(),
            }
        }
        match (timestamp, sampled_value) {
            (Some(timestamp), Some(samples)) => Ok(K::meter_value(timestamp, samples)),
            _ => give_up(),
        }
    }
}

#[derive(Clone, Copy)]
struct SampledValueSeed;

impl<'de> DeserializeSeed<'de> for SampledValueSeed {
    type Value = SampledValue<'de>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for SampledValueSeed {
    type Value = SampledValue<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sampledValue")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut value = None;
        let mut sample = SampledValue {
            value: Cow::Borrowed(""),
            context: None,
            format: None,
            measurand: None,
            phase: None,
            location: None,
            unit: None,
        };
        while let Some(Key(key)) = map.next_key()? {
            match key.as_ref() {
                "value" => {
                    let Key(text) = map.next_value()?;
                    // Only an escape can hold a NUL, and escaped strings are owned.
                    if matches!(&text, Cow::Owned(owned) if owned.contains('\0')) {
                        return give_up();
                    }
                    once(&mut value, text)?;
                }
                "context" => enumeration(&mut map, &mut sample.context)?,
                "format" => enumeration(&mut map, &mut sample.format)?,
                "measurand" => enumeration(&mut map, &mut sample.measurand)?,
                "phase" => enumeration(&mut map, &mut sample.phase)?,
                "location" => enumeration(&mut map, &mut sample.location)?,
                // The MeterValues schema lists every unit, `Hertz` included.
                "unit" => enumeration(&mut map, &mut sample.unit)?,
                _ => return give_up(),
            }
        }
        sample.value = value.map_or_else(give_up, Ok)?;
        Ok(sample)
    }
}

/// Reads an enumeration value into `slot` by its spec spelling.
fn enumeration<'de, A: MapAccess<'de>, E: SpecEnum>(
    map: &mut A,
    slot: &mut Option<E>,
) -> Result<(), A::Error> {
    let Key(name) = map.next_value()?;
    let value = E::from_name(&name).map_or_else(give_up, Ok)?;
    once(slot, value)
}

#[cfg(test)]
mod tests {
    use crate::v16::{
        Action, MeterValuesCheck, Request, check_meter_values, parse_request, parse_request_tree,
    };

    /// Both readers on `payload`: the same request, or the same refusal (code and text); and
    /// the check that keeps no list agrees with them.
    fn agree(payload: &str) -> bool {
        let streamed = super::meter_values(payload).is_some();
        let by_stream = parse_request(Action::MeterValues, payload);
        let by_tree = parse_request_tree(Action::MeterValues, payload);
        assert_eq!(by_stream, by_tree, "{payload}");
        let checked = by_tree.map(|request| match request {
            Request::MeterValues(request) => MeterValuesCheck::of(&request),
            other => panic!("{payload} read as {other:?}"),
        });
        assert_eq!(check_meter_values(payload), checked, "{payload}");
        assert_eq!(super::check_meter_values(payload).is_some(), streamed);
        streamed
    }

    const SAMPLE: &str = r#"{"value":"12.5","context":"Sample.Clock","format":"Raw","measurand":"Current.Import","phase":"L1","location":"Outlet","unit":"A"}"#;

    #[test]
    fn readings_chargers_send_are_read_without_a_tree_and_as_the_tree_reads_them() {
        for payload in [
            format!(
                r#"{{"connectorId":1,"transactionId":7,"meterValue":[{{"timestamp":"2026-11-21T10:00:00.250+02:00","sampledValue":[{SAMPLE},{{"value":"1"}}]}}]}}"#
            ),
            r#"{"meterValue":[{"sampledValue":[{"value":"1"}],"timestamp":"2026-11-21T10:00:00"}],"connectorId":0}"#.to_string(),
            r#" { "connectorId" : 99 , "meterValue" : [ { "timestamp" : "2026-11-21T10:00:00Z" , "sampledValue" : [ { "value" : "é\"\u00e9" , "unit" : "Hertz" } ] } ] } "#.to_string(),
            r#"{"conn\u0065ctorId":2,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"5"}]},{"timestamp":"2026-11-21T10:01:00Z","sampledValue":[{"value":"6","format":"SignedData"}]}]}"#.to_string(),
        ] {
            assert!(agree(&payload), "left to the tree: {payload}");
        }
    }

    #[test]
    fn anything_the_rules_refuse_or_that_is_unusual_is_left_to_the_tree() {
        let reading = |connector: &str, sample: &str| {
            format!(
                r#"{{"connectorId":{connector},"meterValue":[{{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{sample}]}}]}}"#
            )
        };
        for payload in [
            reading("100", r#"{"value":"1"}"#),
            reading("-1", r#"{"value":"1"}"#),
            reading("1.0", r#"{"value":"1"}"#),
            reading("-0", r#"{"value":"1"}"#),
            reading("null", r#"{"value":"1"}"#),
            reading("\"1\"", r#"{"value":"1"}"#),
            reading("18446744073709551616", r#"{"value":"1"}"#),
            reading("1", r#"{"value":1}"#),
            reading("1", r#"{"value":"a\u0000b"}"#),
            reading("1", r#"{"value":"1","unit":"Volts"}"#),
            reading("1", r#"{"value":"1","unit":null}"#),
            reading("1", r#"{"value":"1","colour":"red"}"#),
            reading("1", r#"{"value":"1","value":"2"}"#),
            reading("1", r#"{"unit":"Wh"}"#),
            reading("1", ""),
            r#"{"connectorId":1,"connectorId":2,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"1"}]}]}"#.to_string(),
            r#"{"connectorId":1,"transactionId":2147483648,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"1"}]}]}"#.to_string(),
            r#"{"connectorId":1,"meterValue":[{"timestamp":"yesterday","sampledValue":[{"value":"1"}]}]}"#.to_string(),
            r#"{"connectorId":1,"meterValue":[]}"#.to_string(),
            r#"{"connectorId":1}"#.to_string(),
            r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"1"}]}]} x"#.to_string(),
            r#"[1]"#.to_string(),
            String::new(),
        ] {
            assert!(!agree(&payload), "read without the tree: {payload}");
        }
    }
}
