//! Typed extraction from a parsed payload: each accessor enforces one schema rule and
//! names the field path in the violation it raises.
//!
//! Mapping: wrong JSON type → TypeConstraintViolation; missing required field or too
//! few array items → OccurenceConstraintViolation; bad enumeration value, too long a
//! string, a string holding a NUL character, an integer out of range or a bad date-time
//! → PropertyConstraintViolation; unknown property, or a payload that is not an object →
//! FormationViolation.

use std::borrow::Cow;
use std::fmt;

use chrono::{DateTime, Utc};

use super::spec_enum::SpecEnum;
use super::timestamp::parse_timestamp;
use crate::error::{ErrorCode, Violation, excerpt};
use crate::json::{Json, Number};

/// Where a value sits in the payload, e.g. `meterValue[0].sampledValue[2].measurand`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Path<'p> {
    Root,
    Field(&'p Path<'p>, &'static str),
    Index(&'p Path<'p>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Field(Path::Root, name) => f.write_str(name),
            Path::Field(parent, name) => write!(f, "{parent}.{name}"),
            Path::Index(parent, i) => write!(f, "{parent}[{i}]"),
        }
    }
}

/// No maxLength in the schema.
pub(crate) const UNBOUNDED: usize = usize::MAX;

pub(crate) fn violation(
    code: ErrorCode,
    path: &Path<'_>,
    message: fmt::Arguments<'_>,
) -> Violation {
    let description = match path {
        Path::Root => message.to_string(),
        _ => format!("{path}: {message}"),
    };
    Violation::new(code, description)
}

fn wrong_type(path: &Path<'_>, expected: &str, got: &Json<'_>) -> Violation {
    let got = got.kind();
    violation(
        ErrorCode::TypeConstraintViolation,
        path,
        format_args!("expected {expected}, got {got}"),
    )
}

/// A JSON object checked against its schema's property list; fields are moved out
/// as they are read, so owned (escaped) strings are never cloned.
pub(crate) struct Obj<'a, 'p, const N: usize> {
    slots: [Option<Json<'a>>; N],
    names: &'static [&'static str; N],
    path: &'p Path<'p>,
    /// Where the next lookup starts: fields are read in schema order.
    next: usize,
}

/// Index of `key` in `names`, searching from `from` first: chargers mostly send
/// properties in schema order, so the first comparison usually hits.
fn find(names: &[&str], key: &str, from: usize) -> Option<usize> {
    (from..names.len())
        .chain(0..from.min(names.len()))
        .find(|&i| names[i] == key)
}

impl<'a, 'p, const N: usize> Obj<'a, 'p, N> {
    /// Rejects non-objects (FormationViolation for the payload itself, TypeConstraint
    /// for a nested value) and properties outside `names` (FormationViolation).
    pub(crate) fn new(
        json: Json<'a>,
        path: &'p Path<'p>,
        names: &'static [&'static str; N],
    ) -> Result<Self, Violation> {
        let members = match json {
            Json::Object(members) => members,
            other if matches!(path, Path::Root) => {
                let got = other.kind();
                return Err(violation(
                    ErrorCode::FormationViolation,
                    path,
                    format_args!("payload must be a JSON object, got {got}"),
                ));
            }
            other => return Err(wrong_type(path, "object", &other)),
        };
        let mut slots = [const { None }; N];
        let mut next = 0;
        for (key, value) in members {
            // A repeated key keeps its last value, as most JSON readers do.
            match find(names, &key, next) {
                Some(i) => {
                    slots[i] = Some(value);
                    next = i + 1;
                }
                None => {
                    let key = excerpt(&key);
                    let message = format_args!("unknown property {key:?}");
                    return Err(violation(ErrorCode::FormationViolation, path, message));
                }
            }
        }
        Ok(Obj {
            slots,
            names,
            path,
            next: 0,
        })
    }

    fn path_of(&self, name: &'static str) -> Path<'p> {
        Path::Field(self.path, name)
    }

    fn take(&mut self, name: &'static str) -> Option<Json<'a>> {
        // Field names are literals that usually share storage with `names`, so an
        // address check saves the byte comparison on the hot path.
        let i = match self.names.get(self.next) {
            Some(&listed) if std::ptr::eq(listed, name) => self.next,
            _ => find(self.names, name, self.next).expect("field is listed in the schema"),
        };
        self.next = i + 1;
        self.slots[i].take()
    }

    pub(crate) fn optional<T>(
        &mut self,
        name: &'static str,
        convert: impl FnOnce(Json<'a>, &Path<'_>) -> Result<T, Violation>,
    ) -> Result<Option<T>, Violation> {
        let path = self.path_of(name);
        self.take(name).map(|v| convert(v, &path)).transpose()
    }

    pub(crate) fn required<T>(
        &mut self,
        name: &'static str,
        convert: impl FnOnce(Json<'a>, &Path<'_>) -> Result<T, Violation>,
    ) -> Result<T, Violation> {
        let path = self.path_of(name);
        match self.take(name) {
            Some(v) => convert(v, &path),
            None => Err(violation(
                ErrorCode::OccurenceConstraintViolation,
                &path,
                format_args!("required property is missing"),
            )),
        }
    }

    pub(crate) fn required_str(
        &mut self,
        name: &'static str,
        max_len: usize,
    ) -> Result<Cow<'a, str>, Violation> {
        self.required(name, |v, p| string(v, p, max_len))
    }

    pub(crate) fn optional_str(
        &mut self,
        name: &'static str,
        max_len: usize,
    ) -> Result<Option<Cow<'a, str>>, Violation> {
        self.optional(name, |v, p| string(v, p, max_len))
    }

    pub(crate) fn required_enum<E: SpecEnum>(
        &mut self,
        name: &'static str,
    ) -> Result<E, Violation> {
        self.required(name, enumeration)
    }

    pub(crate) fn optional_enum<E: SpecEnum>(
        &mut self,
        name: &'static str,
    ) -> Result<Option<E>, Violation> {
        self.optional(name, enumeration)
    }

    pub(crate) fn required_timestamp(
        &mut self,
        name: &'static str,
    ) -> Result<DateTime<Utc>, Violation> {
        self.required(name, timestamp)
    }

    /// Items of an array field, each converted with its own `[i]` path; an absent
    /// optional array gives an empty list.
    pub(crate) fn list<T>(
        &mut self,
        name: &'static str,
        required: bool,
        min_items: usize,
        mut convert: impl FnMut(Json<'a>, &Path<'_>) -> Result<T, Violation>,
    ) -> Result<Vec<T>, Violation> {
        let path = self.path_of(name);
        let items = match self.take(name) {
            Some(Json::Array(items)) => items,
            Some(other) => return Err(wrong_type(&path, "array", &other)),
            None if !required => return Ok(Vec::new()),
            None => {
                let message = format_args!("required property is missing");
                return Err(violation(
                    ErrorCode::OccurenceConstraintViolation,
                    &path,
                    message,
                ));
            }
        };
        if items.len() < min_items {
            let message = format_args!("needs at least {min_items} item(s)");
            return Err(violation(
                ErrorCode::OccurenceConstraintViolation,
                &path,
                message,
            ));
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.into_iter().enumerate() {
            out.push(convert(item, &Path::Index(&path, i))?);
        }
        Ok(out)
    }
}

/// A string of at most `max_len` characters (JSON Schema counts characters, not bytes) and
/// without NUL: the schema allows `\u0000`, but no text column of PostgreSQL can hold it, and a
/// record the store refuses would be taken from the charger and then lost.
pub(crate) fn string<'a>(
    v: Json<'a>,
    path: &Path<'_>,
    max_len: usize,
) -> Result<Cow<'a, str>, Violation> {
    let Json::Str(s) = v else {
        return Err(wrong_type(path, "string", &v));
    };
    // Only an escape can put a NUL in a JSON string, and escaped strings are the owned ones:
    // the borrowed (common) case costs nothing.
    if let Cow::Owned(owned) = &s
        && owned.contains('\0')
    {
        let message = format_args!("must not contain NUL characters (\\u0000)");
        return Err(violation(
            ErrorCode::PropertyConstraintViolation,
            path,
            message,
        ));
    }
    // Byte length bounds the character count, so most strings skip the count.
    if s.len() > max_len {
        let chars = s.chars().count();
        if chars > max_len {
            let message = format_args!("longer than {max_len} characters ({chars})");
            return Err(violation(
                ErrorCode::PropertyConstraintViolation,
                path,
                message,
            ));
        }
    }
    Ok(s)
}

/// A JSON integer that fits OCPP's 32-bit signed `integer`; fractions are a type error.
pub(crate) fn integer(v: Json<'_>, path: &Path<'_>) -> Result<i32, Violation> {
    let n = match v {
        Json::Number(n @ (Number::Unsigned(_) | Number::Signed(_))) => n,
        other => return Err(wrong_type(path, "integer", &other)),
    };
    n.as_i64()
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| {
            let message = format_args!("{n} is out of range for a 32-bit integer");
            violation(ErrorCode::PropertyConstraintViolation, path, message)
        })
}

/// The highest connector number accepted: the REST API's bound on connector numbers, so that
/// a charger cannot make connectors the API can never show (or millions of rows).
pub const MAX_CONNECTOR_ID: u32 = 99;

/// A connector id: an integer from `min` (0 is the charge point itself) to
/// [`MAX_CONNECTOR_ID`].
pub(crate) fn connector_id(v: Json<'_>, path: &Path<'_>, min: u32) -> Result<u32, Violation> {
    let id = integer(v, path)?;
    match u32::try_from(id) {
        Ok(id) if (min..=MAX_CONNECTOR_ID).contains(&id) => Ok(id),
        _ => {
            let message = format_args!("must be from {min} to {MAX_CONNECTOR_ID}, got {id}");
            Err(violation(
                ErrorCode::PropertyConstraintViolation,
                path,
                message,
            ))
        }
    }
}

pub(crate) fn enumeration<E: SpecEnum>(v: Json<'_>, path: &Path<'_>) -> Result<E, Violation> {
    let Json::Str(s) = v else {
        return Err(wrong_type(path, "string", &v));
    };
    E::from_name(&s).ok_or_else(|| {
        let value = excerpt(&s);
        let message = format_args!("unknown value {value:?}");
        violation(ErrorCode::PropertyConstraintViolation, path, message)
    })
}

pub(crate) fn timestamp(v: Json<'_>, path: &Path<'_>) -> Result<DateTime<Utc>, Violation> {
    let Json::Str(s) = v else {
        return Err(wrong_type(path, "string", &v));
    };
    parse_timestamp(&s).ok_or_else(|| {
        let value = excerpt(&s);
        let message = format_args!("not an RFC 3339 date-time: {value:?}");
        violation(ErrorCode::PropertyConstraintViolation, path, message)
    })
}
