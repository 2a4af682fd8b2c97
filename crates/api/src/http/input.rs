//! Request input checked the way the reference's Laravel validation checks it: every rule of
//! every field is checked, and all failures come back together as one 422 keyed by field, with
//! Laravel's messages ("The name field must not be greater than 255 characters.").
//!
//! ```ignore
//! let mut input = body; // Input, from a JSON body or a query string
//! let name = input.string("name", Rules::required().max(255.0));
//! let number = input.number("house_number", Rules::optional().min(0.0));
//! input.finish()?; // 422 if any rule failed
//! ```
//!
//! Getters return `None` when the field is absent, or present but invalid (the error is
//! recorded, so `finish` fails); `Some(None)` when it is an explicit `null` a nullable rule
//! allows; `Some(Some(v))` otherwise. Nothing a client sends makes them panic.

use crate::http::error::ApiError;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The largest request body read; a larger one is answered 413.
pub const BODY_LIMIT: usize = 1 << 20;

/// Rules of one field.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rules {
    pub required: bool,
    pub nullable: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Rules {
    pub const fn required() -> Rules {
        Rules {
            required: true,
            nullable: false,
            min: None,
            max: None,
        }
    }
    pub const fn optional() -> Rules {
        Rules {
            required: false,
            nullable: false,
            min: None,
            max: None,
        }
    }
    /// `null` is accepted (and returned as `Some(None)`).
    pub const fn nullable(mut self) -> Rules {
        self.nullable = true;
        self
    }
    /// Strings: characters; numbers: value.
    pub const fn min(mut self, min: f64) -> Rules {
        self.min = Some(min);
        self
    }
    /// Strings: characters; numbers: value; arrays: items.
    pub const fn max(mut self, max: f64) -> Rules {
        self.max = Some(max);
        self
    }
    pub const fn between(self, min: f64, max: f64) -> Rules {
        self.min(min).max(max)
    }
}

/// A request's input fields and the rule failures found so far.
#[derive(Debug, Default)]
pub struct Input {
    fields: Map<String, Value>,
    errors: BTreeMap<String, Vec<String>>,
}

/// "house_number" → "house number", as Laravel names attributes in messages.
pub fn attribute(field: &str) -> String {
    field.replace('_', " ")
}

impl Input {
    pub fn new(fields: Map<String, Value>) -> Input {
        let mut input = Input {
            fields,
            errors: BTreeMap::new(),
        };
        // No text in the store may hold a NUL character (PostgreSQL refuses it), so a field
        // carrying one anywhere inside is invalid whatever its rules.
        let with_nul: Vec<String> = input
            .fields
            .iter()
            .filter(|(name, value)| name.contains('\0') || holds_nul(value))
            .map(|(name, _)| name.replace('\0', ""))
            .collect();
        for field in with_nul {
            let message = format!(
                "The {} field must not contain NUL characters.",
                attribute(&field)
            );
            input.fail(&field, message);
        }
        input
    }

    /// A JSON body: empty means no fields; anything but a JSON object is a 400.
    pub fn from_json(body: &[u8]) -> Result<Input, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Input::default());
        }
        match serde_json::from_slice::<Value>(body) {
            Ok(Value::Object(fields)) => Ok(Input::new(fields)),
            Ok(_) => Err(ApiError::BadRequest(
                "The request body must be a JSON object.".into(),
            )),
            Err(_) => Err(ApiError::BadRequest(
                "The request body is not valid JSON.".into(),
            )),
        }
    }

    /// Query-string pairs as string fields (`limit=5` reads as the number 5 where a number is
    /// expected); a value that is itself JSON (`filter={"status":"Available"}`) reads as JSON.
    pub fn from_query(pairs: impl IntoIterator<Item = (String, String)>) -> Input {
        let fields = pairs
            .into_iter()
            .map(|(k, v)| {
                let value = match v.trim_start().chars().next() {
                    Some('{') | Some('[') => serde_json::from_str(&v).unwrap_or(Value::String(v)),
                    _ => Value::String(v),
                };
                (k, value)
            })
            .collect();
        Input::new(fields)
    }

    /// Merges fields of `other` that this input lacks (e.g. query parameters under a body).
    pub fn or(mut self, other: Input) -> Input {
        for (k, v) in other.fields {
            self.fields.entry(k).or_insert(v);
        }
        self
    }

    /// Every field as one JSON object, for a reader of a nested document (a tariff's
    /// elements) that reports its own failures by path.
    pub fn all_fields(&self) -> Value {
        Value::Object(self.fields.clone())
    }

    pub fn has(&self, field: &str) -> bool {
        self.fields.contains_key(field)
    }

    /// The raw value of a field, unchecked (for tests of what a parser kept).
    #[cfg(test)]
    pub fn raw(&self, field: &str) -> Option<&Value> {
        self.fields.get(field)
    }

    /// Records a failure of `field` (for rules only the handler knows).
    pub fn fail(&mut self, field: &str, message: impl Into<String>) {
        self.errors
            .entry(field.to_string())
            .or_default()
            .push(message.into());
    }

    /// 422 with every failure, or Ok.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation(self.errors))
        }
    }

    /// The presence rules shared by every type: `Err(())` means "stop checking this field".
    fn present(&mut self, field: &str, rules: Rules) -> Result<Option<Value>, ()> {
        match self.fields.get(field) {
            None => {
                if rules.required {
                    self.fail(
                        field,
                        format!("The {} field is required.", attribute(field)),
                    );
                }
                Err(())
            }
            Some(Value::Null) if rules.nullable && !rules.required => Ok(None),
            Some(Value::Null) => {
                let message = if rules.required {
                    format!("The {} field is required.", attribute(field))
                } else {
                    format!("The {} field must not be null.", attribute(field))
                };
                self.fail(field, message);
                Err(())
            }
            Some(value) => Ok(Some(value.clone())),
        }
    }

    /// A string; `min`/`max` count characters. Required strings must not be empty.
    pub fn string(&mut self, field: &str, rules: Rules) -> Option<Option<String>> {
        let value = self.present(field, rules).ok()?;
        let Some(value) = value else {
            return Some(None);
        };
        let Value::String(text) = value else {
            self.fail(
                field,
                format!("The {} field must be a string.", attribute(field)),
            );
            return None;
        };
        if rules.required && text.trim().is_empty() {
            self.fail(
                field,
                format!("The {} field is required.", attribute(field)),
            );
            return None;
        }
        let length = text.chars().count() as f64;
        if let Some(max) = rules.max.filter(|max| length > *max) {
            self.fail(
                field,
                format!(
                    "The {} field must not be greater than {max} characters.",
                    attribute(field)
                ),
            );
            return None;
        }
        if let Some(min) = rules.min.filter(|min| length < *min) {
            self.fail(
                field,
                format!(
                    "The {} field must be at least {min} characters.",
                    attribute(field)
                ),
            );
            return None;
        }
        Some(Some(text))
    }

    /// A required string (`None` only when invalid).
    pub fn required_string(&mut self, field: &str, max: f64) -> Option<String> {
        self.string(field, Rules::required().max(max)).flatten()
    }

    /// A string that must be one of `allowed`.
    pub fn one_of(
        &mut self,
        field: &str,
        rules: Rules,
        allowed: &[&str],
    ) -> Option<Option<String>> {
        let text = self.string(field, rules)?;
        match text {
            Some(t) if !allowed.contains(&t.as_str()) => {
                self.fail(
                    field,
                    format!("The selected {} is invalid.", attribute(field)),
                );
                None
            }
            other => Some(other),
        }
    }

    /// An e-mail address (at most `max` characters).
    pub fn email(&mut self, field: &str, rules: Rules) -> Option<Option<String>> {
        let text = self.string(field, rules)?;
        match text {
            Some(t) if !is_email(&t) => {
                self.fail(
                    field,
                    format!(
                        "The {} field must be a valid email address.",
                        attribute(field)
                    ),
                );
                None
            }
            other => Some(other),
        }
    }

    /// An integer: a JSON integer, or text of one (as query parameters are).
    pub fn integer(&mut self, field: &str, rules: Rules) -> Option<Option<i64>> {
        let value = self.present(field, rules).ok()?;
        let Some(value) = value else {
            return Some(None);
        };
        let number = match &value {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            }),
            Value::String(s) => s.trim().parse::<i64>().ok(),
            _ => None,
        };
        let Some(number) = number else {
            self.fail(
                field,
                format!("The {} field must be an integer.", attribute(field)),
            );
            return None;
        };
        self.check_range(field, number as f64, rules)
            .then_some(Some(number))
    }

    /// A number: a JSON number, or text of one.
    pub fn number(&mut self, field: &str, rules: Rules) -> Option<Option<f64>> {
        let value = self.present(field, rules).ok()?;
        let Some(value) = value else {
            return Some(None);
        };
        let number = match &value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()),
            _ => None,
        };
        let Some(number) = number else {
            self.fail(
                field,
                format!("The {} field must be a number.", attribute(field)),
            );
            return None;
        };
        self.check_range(field, number, rules)
            .then_some(Some(number))
    }

    fn check_range(&mut self, field: &str, n: f64, rules: Rules) -> bool {
        let name = attribute(field);
        let message = match (rules.min, rules.max) {
            (Some(min), Some(max)) if n < min || n > max => {
                format!("The {name} field must be between {min} and {max}.")
            }
            (Some(min), None) if n < min => format!("The {name} field must be at least {min}."),
            (None, Some(max)) if n > max => {
                format!("The {name} field must not be greater than {max}.")
            }
            _ => return true,
        };
        self.fail(field, message);
        false
    }

    /// A boolean: true/false, 1/0, "1"/"0", "true"/"false" (Laravel's boolean rule).
    pub fn boolean(&mut self, field: &str, rules: Rules) -> Option<Option<bool>> {
        let value = self.present(field, rules).ok()?;
        let Some(value) = value else {
            return Some(None);
        };
        let flag = match &value {
            Value::Bool(b) => Some(*b),
            Value::Number(n) => match n.as_i64() {
                Some(1) => Some(true),
                Some(0) => Some(false),
                _ => None,
            },
            Value::String(s) => match s.as_str() {
                "1" | "true" => Some(true),
                "0" | "false" => Some(false),
                _ => None,
            },
            _ => None,
        };
        if flag.is_none() {
            self.fail(
                field,
                format!("The {} field must be true or false.", attribute(field)),
            );
        }
        flag.map(Some)
    }

    /// A calendar date `YYYY-MM-DD`.
    pub fn date(&mut self, field: &str, rules: Rules) -> Option<Option<chrono::NaiveDate>> {
        let text = self.string(field, rules)?;
        let Some(text) = text else {
            return Some(None);
        };
        match chrono::NaiveDate::parse_from_str(&text, "%Y-%m-%d") {
            Ok(date) => Some(Some(date)),
            Err(_) => {
                self.fail(
                    field,
                    format!("The {} field must be a valid date.", attribute(field)),
                );
                None
            }
        }
    }

    /// A JSON array.
    pub fn array(&mut self, field: &str, rules: Rules) -> Option<Option<Vec<Value>>> {
        let value = self.present(field, rules).ok()?;
        match value {
            None => Some(None),
            Some(Value::Array(items)) if rules.max.is_some_and(|max| items.len() as f64 > max) => {
                let max = rules.max.unwrap_or_default();
                self.fail(
                    field,
                    format!(
                        "The {} field must not have more than {max} items.",
                        attribute(field)
                    ),
                );
                None
            }
            Some(Value::Array(items)) => Some(Some(items)),
            Some(_) => {
                self.fail(
                    field,
                    format!("The {} field must be an array.", attribute(field)),
                );
                None
            }
        }
    }

    /// A JSON object.
    pub fn object(&mut self, field: &str, rules: Rules) -> Option<Option<Map<String, Value>>> {
        let value = self.present(field, rules).ok()?;
        match value {
            None => Some(None),
            Some(Value::Object(map)) => Some(Some(map)),
            Some(_) => {
                self.fail(
                    field,
                    format!("The {} field must be an object.", attribute(field)),
                );
                None
            }
        }
    }
}

/// Whether any string (or key) in `value` holds a NUL character.
pub fn holds_nul(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains('\0'),
        Value::Array(items) => items.iter().any(holds_nul),
        Value::Object(map) => map.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

/// A request's body, or the answer every endpoint gives when it cannot be read (413 past the
/// limit, else 400).
pub async fn request_body<S: Send + Sync>(req: Request, state: &S) -> Result<Bytes, ApiError> {
    Bytes::from_request(req, state)
        .await
        .map_err(|e| match e.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::PayloadTooLarge,
            _ => ApiError::BadRequest(e.body_text()),
        })
}

/// A request's body as bytes, refused as every endpoint refuses one it cannot read (axum's own
/// `Bytes` answers in plain text).
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<RawBody, ApiError> {
        request_body(req, state).await.map(RawBody)
    }
}

/// A JSON request body as [`Input`] (any content type; empty means no fields).
impl<S: Send + Sync> FromRequest<S> for Input {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Input, ApiError> {
        Input::from_json(&request_body(req, state).await?)
    }
}

/// A plausible e-mail address: one `@`, a non-empty local part, a dotted domain, no spaces.
pub fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn input(v: Value) -> Input {
        match v {
            Value::Object(map) => Input::new(map),
            _ => unreachable!(),
        }
    }

    fn errors(input: Input) -> BTreeMap<String, Vec<String>> {
        match input.finish() {
            Err(ApiError::Validation(errors)) => errors,
            other => panic!("expected a validation failure, got {other:?}"),
        }
    }

    #[test]
    fn every_failing_field_is_reported_with_laravel_messages() {
        let mut i = input(json!({"name": "x".repeat(256), "house_number": -1, "country": 7}));
        assert_eq!(i.string("name", Rules::optional().max(255.0)), None);
        assert_eq!(i.number("house_number", Rules::optional().min(0.0)), None);
        assert_eq!(i.string("country", Rules::optional().max(2.0)), None);
        assert_eq!(i.string("city", Rules::required()), None);
        let errors = errors(i);
        assert_eq!(
            errors["name"],
            ["The name field must not be greater than 255 characters."]
        );
        assert_eq!(
            errors["house_number"],
            ["The house number field must be at least 0."]
        );
        assert_eq!(errors["country"], ["The country field must be a string."]);
        assert_eq!(errors["city"], ["The city field is required."]);
    }

    #[test]
    fn absent_null_and_present_are_told_apart() {
        let mut i = input(json!({"a": null, "b": "x", "c": null}));
        assert_eq!(i.string("a", Rules::optional().nullable()), Some(None));
        assert_eq!(i.string("b", Rules::optional()), Some(Some("x".into())));
        assert_eq!(i.string("z", Rules::optional()), None);
        assert_eq!(i.string("c", Rules::optional()), None);
        assert_eq!(errors(i)["c"], ["The c field must not be null."]);
    }

    #[test]
    fn integers_accept_query_text_and_check_ranges() {
        let mut i = Input::from_query([("limit".into(), "10001".into()), ("n".into(), "5".into())]);
        assert_eq!(i.integer("n", Rules::optional()), Some(Some(5)));
        assert_eq!(
            i.integer("limit", Rules::optional().between(1.0, 10000.0)),
            None
        );
        assert_eq!(
            errors(i)["limit"],
            ["The limit field must be between 1 and 10000."]
        );
        let mut i = input(json!({"x": 1.5, "y": "abc", "z": true}));
        assert_eq!(i.integer("x", Rules::optional()), None);
        assert_eq!(i.integer("y", Rules::optional()), None);
        assert_eq!(i.integer("z", Rules::optional()), None);
        assert_eq!(errors(i).len(), 3);
    }

    #[test]
    fn emails_booleans_dates_and_choices() {
        let mut i = input(json!({
            "email": "not-an-address", "flag": "yes", "date": "2026-02-30", "role": "boss",
            "ok_email": "a@b.co", "ok_flag": 0, "ok_date": "2026-12-01"
        }));
        assert_eq!(i.email("email", Rules::required()), None);
        assert_eq!(i.boolean("flag", Rules::optional()), None);
        assert_eq!(i.date("date", Rules::optional()), None);
        assert_eq!(i.one_of("role", Rules::optional(), &["leader"]), None);
        assert_eq!(
            i.email("ok_email", Rules::required()),
            Some(Some("a@b.co".into()))
        );
        assert_eq!(i.boolean("ok_flag", Rules::optional()), Some(Some(false)));
        assert!(matches!(
            i.date("ok_date", Rules::optional()),
            Some(Some(_))
        ));
        let errors = errors(i);
        assert_eq!(
            errors["email"],
            ["The email field must be a valid email address."]
        );
        assert_eq!(errors["flag"], ["The flag field must be true or false."]);
        assert_eq!(errors["date"], ["The date field must be a valid date."]);
        assert_eq!(errors["role"], ["The selected role is invalid."]);
    }

    #[test]
    fn nul_characters_anywhere_in_a_field_fail_it() {
        let i = Input::from_json(
            br#"{"name": "a\u0000b", "servers": [{"role": "x\u0000"}], "ok": "x"}"#,
        )
        .unwrap();
        let errors = errors(i);
        assert_eq!(
            errors["name"],
            ["The name field must not contain NUL characters."]
        );
        assert!(errors.contains_key("servers"));
        assert!(!errors.contains_key("ok"));
    }

    #[test]
    fn bodies_that_are_not_objects_are_refused() {
        assert!(Input::from_json(b"").is_ok());
        assert!(matches!(
            Input::from_json(b"[1]"),
            Err(ApiError::BadRequest(_))
        ));
        assert!(matches!(
            Input::from_json(b"{nope"),
            Err(ApiError::BadRequest(_))
        ));
    }
}
