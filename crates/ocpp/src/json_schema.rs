//! A JSON Schema validator for exactly the keywords the official OCPP schemas use (1.6:
//! draft-04; 2.0.1: draft-06), with two rules cms adds to every schema; violations read like
//! `extract`'s.
//!
//! Keywords: `type` (one of object, array, string, integer, number, boolean), `properties`,
//! `required`, `additionalProperties` (`false` only), `items` (one schema), `minItems`, `enum`
//! (of strings), `maxLength`, `format` (`date-time`, `uri`) and `multipleOf`; `$schema`, `id` and
//! `title` are ignored. For 2.0.1 also `$ref` (to `#/definitions/...`, resolved when compiling),
//! `maxItems`, `minimum`, `maximum` and `additionalItems` (`false` beside one `items` schema,
//! where it means nothing); `description`, `comment`, `javaType`, `default` and `$id` are
//! ignored. A schema using anything else does not compile, so a refreshed schema is never
//! half-checked.
//!
//! cms's own rules, in every schema: an `integer` fits 32 bits (as `extract` reads it), and no
//! string holds a NUL character (`\u0000`: no PostgreSQL text can hold it).
//!
//! Mapping, as in `extract` (and OCPP 2.0.1 part 4, 4.3): wrong JSON type →
//! TypeConstraintViolation; missing required field, too few or too many items →
//! OccurenceConstraintViolation; a value outside its enumeration, too long a string, a NUL, an
//! integer beyond 32 bits, a number beyond its minimum or maximum, a bad date-time or URI, not
//! a multiple → PropertyConstraintViolation; unknown property, or a payload that is not an
//! object → FormationViolation. (`ErrorCode::spelled` writes the last two codes 2.0.1's way.)

pub(crate) mod capture;
mod compile;
pub(crate) mod stream;
#[cfg(test)]
mod tests;

use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Number, Value};

pub(crate) use compile::{compile, compile_draft06};

use crate::error::{ErrorCode, Violation, excerpt};
use crate::v16::timestamp::parse_timestamp;

/// One way a payload breaks its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaViolation {
    /// The field as Laravel names it in a 422's `errors`: `localAuthorizationList.0.idTag`, `""`
    /// for the payload itself. An unknown property is named itself (`csChargingProfiles.foo`).
    pub field: String,
    /// The CALLERROR code and description; the description starts with the field path as OCPP
    /// texts write it (`localAuthorizationList[0].idTag: ...`), or with the object's path for
    /// an unknown property.
    pub violation: Violation,
}

impl fmt::Display for SchemaViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.violation.fmt(f)
    }
}

impl std::error::Error for SchemaViolation {}

/// Every way a payload breaks its schema: never empty, in document order. The first is what a
/// CALLERROR or an action's `error` reports (`Violation::from`); a 422 shows them all.
#[derive(Debug, Clone, PartialEq)]
pub struct SchemaViolations(Vec<SchemaViolation>);

impl SchemaViolations {
    pub fn first(&self) -> &SchemaViolation {
        &self.0[0]
    }

    pub fn iter(&self) -> std::slice::Iter<'_, SchemaViolation> {
        self.0.iter()
    }
}

impl IntoIterator for SchemaViolations {
    type Item = SchemaViolation;
    type IntoIter = std::vec::IntoIter<SchemaViolation>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a SchemaViolations {
    type Item = &'a SchemaViolation;
    type IntoIter = std::slice::Iter<'a, SchemaViolation>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl From<SchemaViolations> for Violation {
    /// The first violation.
    fn from(found: SchemaViolations) -> Violation {
        found.0.into_iter().next().expect("never empty").violation
    }
}

impl fmt::Display for SchemaViolations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.len() {
            1 => self.first().fmt(f),
            n => write!(f, "{} (and {} more)", self.first(), n - 1),
        }
    }
}

impl std::error::Error for SchemaViolations {}

/// At most this many violations are reported for one payload: enough for any form, and a
/// huge payload breaking a rule in every item cannot turn into a huge error.
pub(crate) const MAX_REPORTED_VIOLATIONS: usize = 100;

/// A compiled schema: one node per schema object, keywords already resolved.
#[derive(Debug)]
pub(crate) enum Node {
    Object {
        /// In schema order, which is the order violations are reported in.
        properties: Vec<Property>,
        /// `additionalProperties: false`.
        closed: bool,
    },
    Array {
        items: Arc<Node>,
        min_items: usize,
        max_items: Option<usize>,
    },
    String(StringRules),
    Integer(Bounds),
    Number {
        multiple_of: Option<f64>,
        bounds: Bounds,
    },
    Boolean,
    /// A schema of annotations only: any JSON value (held to the NUL rule all the same).
    Any,
}

#[derive(Debug)]
pub(crate) struct Property {
    name: String,
    required: bool,
    /// Shared with every other place that refers to the same definition.
    node: Arc<Node>,
}

/// `minimum` and `maximum`, both inclusive.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Bounds {
    minimum: Option<f64>,
    maximum: Option<f64>,
}

impl Bounds {
    /// What is wrong with `x` (shown as `shown`), if anything.
    fn problem(self, x: f64, shown: &dyn fmt::Display) -> Option<String> {
        if let Some(min) = self.minimum.filter(|min| x < *min) {
            return Some(format!("{shown} is below the minimum {min}"));
        }
        let max = self.maximum.filter(|max| x > *max)?;
        Some(format!("{shown} is above the maximum {max}"))
    }
}

#[derive(Debug)]
pub(crate) struct StringRules {
    max_len: Option<usize>,
    one_of: Option<Vec<String>>,
    format: Option<Format>,
}

#[derive(Debug, Clone, Copy)]
enum Format {
    DateTime,
    Uri,
}

impl Node {
    /// Every way `payload` breaks this schema (at most [`MAX_REPORTED_VIOLATIONS`]), in
    /// document order; within an object, unknown properties come first, then the listed ones
    /// in schema order, as `extract` reads them.
    pub(crate) fn validate(&self, payload: &Value) -> Result<(), SchemaViolations> {
        self.validate_with(payload, Times::OffsetOptional)
    }

    /// [`Node::validate`] for a payload cms sends: a date-time must carry its offset (`Z` or
    /// `±hh:mm`), as RFC 3339 has it. What chargers send may omit it (read as UTC, as many
    /// do); what cms sends is held to the letter, so that no charger is left to guess.
    pub(crate) fn validate_sent(&self, payload: &Value) -> Result<(), SchemaViolations> {
        self.validate_with(payload, Times::OffsetRequired)
    }

    fn validate_with(&self, payload: &Value, times: Times) -> Result<(), SchemaViolations> {
        let mut walk = Walk {
            path: Vec::new(),
            found: Vec::new(),
            times,
        };
        walk.node(self, payload);
        if walk.found.is_empty() {
            Ok(())
        } else {
            Err(SchemaViolations(walk.found))
        }
    }

    fn type_name(&self) -> &'static str {
        match self {
            Node::Object { .. } => "object",
            Node::Array { .. } => "array",
            Node::String(_) => "string",
            Node::Integer(_) => "integer",
            Node::Number { .. } => "number",
            Node::Boolean => "boolean",
            Node::Any => "any value",
        }
    }
}

/// The JSON type name, as `Json::kind` gives it: a number with a fraction or an exponent is
/// a `number`, any other an `integer`.
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[derive(Debug, Clone, Copy)]
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Whether a date-time may omit its offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Times {
    OffsetOptional,
    OffsetRequired,
}

struct Walk<'a> {
    path: Vec<Step<'a>>,
    found: Vec<SchemaViolation>,
    times: Times,
}

impl<'a> Walk<'a> {
    fn node(&mut self, node: &'a Node, value: &'a Value) {
        if self.found.len() >= MAX_REPORTED_VIOLATIONS {
            return;
        }
        match (node, value) {
            (Node::Any, value) => self.any(value),
            (Node::Object { properties, closed }, Value::Object(members)) => {
                self.object(properties, *closed, members);
            }
            (
                Node::Array {
                    items,
                    min_items,
                    max_items,
                },
                Value::Array(values),
            ) => {
                self.array(items, (*min_items, *max_items), values);
            }
            (Node::String(rules), Value::String(text)) => self.string(rules, text),
            (Node::Integer(bounds), Value::Number(n)) if !n.is_f64() => self.integer(*bounds, n),
            (
                Node::Number {
                    multiple_of,
                    bounds,
                },
                Value::Number(n),
            ) => {
                if let (Some(of), Some(x)) = (multiple_of, n.as_f64())
                    && !is_multiple(x, *of)
                {
                    let message = format_args!("{n} is not a multiple of {of}");
                    self.report(ErrorCode::PropertyConstraintViolation, None, message);
                } else if let Some(problem) = n.as_f64().and_then(|x| bounds.problem(x, n)) {
                    let message = format_args!("{problem}");
                    self.report(ErrorCode::PropertyConstraintViolation, None, message);
                }
            }
            (Node::Boolean, Value::Bool(_)) => {}
            (Node::Object { .. }, other) if self.path.is_empty() => {
                let got = kind(other);
                let message = format_args!("payload must be a JSON object, got {got}");
                self.report(ErrorCode::FormationViolation, None, message);
            }
            (node, other) => {
                let (expected, got) = (node.type_name(), kind(other));
                let message = format_args!("expected {expected}, got {got}");
                self.report(ErrorCode::TypeConstraintViolation, None, message);
            }
        }
    }

    fn object(
        &mut self,
        properties: &'a [Property],
        closed: bool,
        members: &'a Map<String, Value>,
    ) {
        if closed {
            for key in members.keys() {
                if !properties.iter().any(|p| p.name == *key) {
                    let name = excerpt(key);
                    let message = format_args!("unknown property {name:?}");
                    self.report(ErrorCode::FormationViolation, Some(key), message);
                }
            }
        }
        for property in properties {
            self.path.push(Step::Key(&property.name));
            match members.get(&property.name) {
                Some(value) => self.node(&property.node, value),
                None if property.required => {
                    let message = format_args!("required property is missing");
                    self.report(ErrorCode::OccurenceConstraintViolation, None, message);
                }
                None => {}
            }
            self.path.pop();
        }
    }

    fn array(&mut self, items: &'a Node, (min, max): (usize, Option<usize>), values: &'a [Value]) {
        if values.len() < min {
            let message = format_args!("needs at least {min} item(s)");
            self.report(ErrorCode::OccurenceConstraintViolation, None, message);
            return;
        }
        if let Some(max) = max.filter(|max| values.len() > *max) {
            let message = format_args!("holds more than {max} item(s) ({})", values.len());
            self.report(ErrorCode::OccurenceConstraintViolation, None, message);
            return;
        }
        for (i, value) in values.iter().enumerate() {
            self.path.push(Step::Index(i));
            self.node(items, value);
            self.path.pop();
        }
    }

    /// Any value: only the NUL rule, in every string it holds.
    fn any(&mut self, value: &'a Value) {
        match value {
            Value::String(text) if text.contains('\0') => {
                let message = format_args!("must not contain NUL characters (\\u0000)");
                self.report(ErrorCode::PropertyConstraintViolation, None, message);
            }
            Value::Array(values) => {
                for (i, value) in values.iter().enumerate() {
                    self.path.push(Step::Index(i));
                    self.any(value);
                    self.path.pop();
                }
            }
            Value::Object(members) => {
                for (key, value) in members {
                    self.path.push(Step::Key(key));
                    self.any(value);
                    self.path.pop();
                }
            }
            _ => {}
        }
    }

    fn string(&mut self, rules: &StringRules, text: &str) {
        if let Some(message) = string_problem(rules, text, self.times) {
            let message = format_args!("{message}");
            self.report(ErrorCode::PropertyConstraintViolation, None, message);
        }
    }

    fn integer(&mut self, bounds: Bounds, n: &Number) {
        match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            None => {
                let message = format_args!("{n} is out of range for a 32-bit integer");
                self.report(ErrorCode::PropertyConstraintViolation, None, message);
            }
            Some(i) => {
                if let Some(problem) = bounds.problem(f64::from(i), &i) {
                    let message = format_args!("{problem}");
                    self.report(ErrorCode::PropertyConstraintViolation, None, message);
                }
            }
        }
    }

    /// Records a violation at the current path; `member` names an unknown property, which
    /// the field names but the description leaves to its message, as `extract` does.
    fn report(&mut self, code: ErrorCode, member: Option<&str>, message: fmt::Arguments<'_>) {
        if self.found.len() >= MAX_REPORTED_VIOLATIONS {
            return;
        }
        let mut field = dotted(&self.path);
        if let Some(member) = member {
            if !field.is_empty() {
                field.push('.');
            }
            field.push_str(member);
        }
        let description = if self.path.is_empty() {
            message.to_string()
        } else {
            format!("{}: {message}", described(&self.path))
        };
        let violation = Violation::new(code, description);
        self.found.push(SchemaViolation { field, violation });
    }
}

/// What is wrong with a string, in `extract`'s words and order: an enumerated or formatted
/// value is judged by its enumeration or format alone (neither can hold a NUL), any other by
/// the NUL rule, then its length.
fn string_problem(rules: &StringRules, text: &str, times: Times) -> Option<String> {
    let value = excerpt(text);
    if let Some(one_of) = &rules.one_of {
        let known = one_of.iter().any(|allowed| allowed == text);
        return (!known).then(|| format!("unknown value {value:?}"));
    }
    match rules.format {
        Some(Format::DateTime) if parse_timestamp(text).is_none() => {
            return Some(format!("not an RFC 3339 date-time: {value:?}"));
        }
        Some(Format::DateTime)
            if times == Times::OffsetRequired
                && chrono::DateTime::parse_from_rfc3339(text).is_err() =>
        {
            return Some(format!(
                "a date-time without its offset (add Z for UTC, or ±hh:mm): {value:?}"
            ));
        }
        Some(Format::Uri) if !is_uri(text) => {
            return Some(format!("not an absolute URI: {value:?}"));
        }
        _ => {}
    }
    if text.contains('\0') {
        return Some("must not contain NUL characters (\\u0000)".to_owned());
    }
    // Byte length bounds the character count, so most strings skip the count.
    let max = rules.max_len?;
    if text.len() <= max {
        return None;
    }
    let chars = text.chars().count();
    (chars > max).then(|| format!("longer than {max} characters ({chars})"))
}

/// `a.b[0].c`, as the descriptions of `extract` write a path.
fn described(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(key) if out.is_empty() => out.push_str(key),
            Step::Key(key) => {
                out.push('.');
                out.push_str(key);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// `a.b.0.c`, as Laravel names a nested field.
fn dotted(path: &[Step<'_>]) -> String {
    let parts: Vec<String> = path
        .iter()
        .map(|step| match step {
            Step::Key(key) => (*key).to_owned(),
            Step::Index(i) => i.to_string(),
        })
        .collect();
    parts.join(".")
}

/// Whether `x` is a whole multiple of `of`, within float error: `16.1 / 0.1` is
/// 161.00000000000003 in binary floating point, yet 16.1 is what the user meant.
fn is_multiple(x: f64, of: f64) -> bool {
    let quotient = x / of;
    (quotient - quotient.round()).abs() <= 1e-9 * quotient.abs().max(1.0)
}

/// An absolute URI (RFC 3986): a scheme, `:`, then something made only of characters a URI may
/// hold, any other percent-encoded. The structure of the rest is left to the charger that
/// fetches it; a bare scheme is refused, as no charger could fetch from it.
fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut scheme_chars = scheme.chars();
    let scheme_ok = scheme_chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme_chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok || rest.is_empty() {
        return false;
    }
    let bytes = rest.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3);
                if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                    return false;
                }
                i += 3;
            }
            b if b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&b) => i += 1,
            _ => return false,
        }
    }
    true
}
