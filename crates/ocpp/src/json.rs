//! A borrowed JSON tree: strings point into the input unless they held escapes.
//!
//! The `Deserialize` impl is generic over the deserializer, so the same tree comes
//! out of `serde_json::from_str` and `simd_json::serde::from_slice`.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// One JSON value; objects keep their members in input order (duplicates included).
#[derive(Debug, Clone, PartialEq)]
pub enum Json<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Vec<(Cow<'a, str>, Json<'a>)>),
}

/// A JSON number as the parser classified it: integers stay exact, anything with a
/// fraction or exponent is a float (and so never an OCPP `integer`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    /// Non-negative integer.
    Unsigned(u64),
    /// Negative integer.
    Signed(i64),
    Float(f64),
}

impl Number {
    /// The value as an `i64`, or `None` for floats and integers beyond `i64`.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Number::Unsigned(u) => i64::try_from(u).ok(),
            Number::Signed(i) => Some(i),
            Number::Float(_) => None,
        }
    }
}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Number::Unsigned(u) => write!(f, "{u}"),
            Number::Signed(i) => write!(f, "{i}"),
            Number::Float(x) => write!(f, "{x}"),
        }
    }
}

impl Json<'_> {
    /// The JSON type name, as a violation message shows it.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::Number(Number::Float(_)) => "number",
            Json::Number(_) => "integer",
            Json::Str(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json<'de>, D::Error> {
        Json::deserialize(d)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, u: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Number::Unsigned(u)))
    }

    fn visit_i64<E>(self, i: i64) -> Result<Json<'de>, E> {
        // Some deserializers report small non-negative integers as i64.
        Ok(Json::Number(match u64::try_from(i) {
            Ok(u) => Number::Unsigned(u),
            Err(_) => Number::Signed(i),
        }))
    }

    fn visit_f64<E>(self, x: f64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Number::Float(x)))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(4).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        // The first key first: an empty object, and a number as `arbitrary_precision` hands it
        // over, need no list (one allocation less per integer, none for a Heartbeat's `{}`).
        let Some(Key(first)) = map.next_key()? else {
            return Ok(Json::Object(Vec::new()));
        };
        if first == ARBITRARY_PRECISION_NUMBER {
            let Key(text) = map.next_value()?;
            return number_of_text(&text)
                .map(Json::Number)
                .ok_or_else(|| de::Error::custom(format_args!("{text:?} is not a JSON number")));
        }
        // 8 holds a fully populated sampledValue without regrowing.
        let mut members = Vec::with_capacity(map.size_hint().unwrap_or(8).min(64));
        members.push((first, map.next_value()?));
        while let Some(Key(key)) = map.next_key()? {
            members.push((key, map.next_value()?));
        }
        Ok(Json::Object(members))
    }
}

/// How serde_json hands over a float (and an integer beyond 64 bits) when its
/// `arbitrary_precision` feature is on (another crate of the binary may turn it on:
/// `ocpi-tariffs` does): a one-member map from this key to the number's text. Read back as the
/// number it is, so that the tree is the same either way. (Integers that fit come as before.)
const ARBITRARY_PRECISION_NUMBER: &str = "$serde_json::private::Number";

/// A number's JSON text classified as the parser classifies numbers: without a fraction or an
/// exponent it is an integer (a float when beyond 64 bits), else a float.
fn number_of_text(text: &str) -> Option<Number> {
    if !text.contains(['.', 'e', 'E']) {
        if let Ok(u) = text.parse::<u64>() {
            return Some(Number::Unsigned(u));
        }
        if let Ok(i) = text.parse::<i64>() {
            return Some(Number::Signed(i));
        }
    }
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(Number::Float)
}

/// A string that borrows from the input when it can (serde's own `Cow` never does).
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(StrVisitor).map(Key)
    }
}

struct StrVisitor;

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Cow<'de, str>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Borrowed(s))
    }

    fn visit_str<E>(self, s: &str) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Cow<'de, str>, E> {
        Ok(Cow::Owned(s))
    }

    fn visit_bytes<E: de::Error>(self, b: &[u8]) -> Result<Cow<'de, str>, E> {
        Err(E::invalid_type(de::Unexpected::Bytes(b), &self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Json<'_> {
        serde_json::from_str(text).expect("valid JSON")
    }

    #[test]
    fn numbers_handed_over_as_text_read_as_the_numbers_they_are() {
        // What serde_json gives a visitor for `1.5`, `7`, `-3` when `arbitrary_precision` is
        // on, whether or not it is on in this build.
        let as_text = |n: &str| format!(r#"{{"{ARBITRARY_PRECISION_NUMBER}":"{n}"}}"#);
        for (text, number) in [
            ("1.5", Number::Float(1.5)),
            ("1.0", Number::Float(1.0)),
            ("2e3", Number::Float(2000.0)),
            ("7", Number::Unsigned(7)),
            ("-3", Number::Signed(-3)),
            (
                "18446744073709551616",
                Number::Float(18446744073709551616.0),
            ),
        ] {
            assert_eq!(parse(&as_text(text)), Json::Number(number), "{text}");
        }
        let not_a_number = as_text("seven");
        assert!(serde_json::from_str::<Json<'_>>(&not_a_number).is_err());
    }

    #[test]
    fn every_kind_parses() {
        let json = parse(r#"{"n":null,"b":true,"u":7,"i":-3,"f":1.5,"s":"x","a":[1],"o":{}}"#);
        let Json::Object(members) = json else {
            panic!("object expected")
        };
        let kinds: Vec<(&str, &str)> = members.iter().map(|(k, v)| (&**k, v.kind())).collect();
        assert_eq!(
            kinds,
            [
                ("n", "null"),
                ("b", "boolean"),
                ("u", "integer"),
                ("i", "integer"),
                ("f", "number"),
                ("s", "string"),
                ("a", "array"),
                ("o", "object"),
            ]
        );
        assert_eq!(members[3].1, Json::Number(Number::Signed(-3)));
    }

    #[test]
    fn plain_strings_borrow_and_escaped_ones_own() {
        let json = parse(r#"{"plain":"abc","esc\"aped":"caf\u00e9"}"#);
        let Json::Object(members) = json else {
            panic!("object expected")
        };
        assert!(matches!(members[0].0, Cow::Borrowed("plain")));
        assert!(matches!(members[0].1, Json::Str(Cow::Borrowed("abc"))));
        assert!(matches!(&members[1].0, Cow::Owned(k) if k == "esc\"aped"));
        assert!(matches!(&members[1].1, Json::Str(Cow::Owned(v)) if v == "café"));
    }

    #[test]
    fn fractional_and_exponent_numbers_are_floats() {
        assert_eq!(parse("1.0"), Json::Number(Number::Float(1.0)));
        assert_eq!(parse("1e3"), Json::Number(Number::Float(1000.0)));
        assert_eq!(Number::Float(2.0).as_i64(), None);
        assert_eq!(Number::Unsigned(u64::MAX).as_i64(), None);
        assert_eq!(Number::Unsigned(5).as_i64(), Some(5));
    }

    #[test]
    fn duplicate_members_are_kept() {
        let Json::Object(members) = parse(r#"{"a":1,"a":2}"#) else {
            panic!("object expected")
        };
        assert_eq!(members.len(), 2);
    }
}
