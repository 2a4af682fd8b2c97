//! The body of a settings update, checked field by field with Laravel's messages. Amps and
//! counts must be JSON numbers: unlike query parameters, a body has no reason to send `"16"`.

use crate::http::AppState;
use crate::http::error::ApiError;
use crate::http::input::{Input, Rules, attribute, holds_nul, request_body};
use axum::extract::{FromRequest, Request};
use cms_store::smart_charging::SmartChargingSettings;
use cms_store::smart_charging::{MODE_DISABLED, MODE_DYNAMIC, MODES, STRATEGIES};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The highest grid limit taken, in A: far above any site on a low-voltage connection, low
/// enough to catch a value in W or mA.
const MAX_GRID_LIMIT: f64 = 10_000.0;
/// IEC 61851-1: a vehicle cannot be offered less than 6 A; a connector takes at most 80 A.
const MIN_AMPS: f64 = 6.0;
const MAX_AMPS: f64 = 80.0;
/// Amps come as decimal JSON numbers: a difference in their last binary digits (6.6 − 0.2 is
/// a little less than 6.4) is no difference.
const TOLERANCE: f64 = 1e-9;

/// The settings update as read: the checked input, and its raw fields to tell a number from
/// text of one.
pub struct SettingsBody {
    input: Input,
    fields: Map<String, Value>,
}

/// A field of the update: left out, given (and valid), or given and refused.
enum Field<T> {
    Absent,
    Given(T),
    Failed,
}

impl<T> Field<T> {
    /// The value the settings end with (`kept` when left out); `None` when it was refused.
    fn or_kept(self, kept: T) -> Option<T> {
        match self {
            Field::Absent => Some(kept),
            Field::Given(value) => Some(value),
            Field::Failed => None,
        }
    }
}

impl<T> Field<Option<T>> {
    /// A field that is not nullable: `Input` has refused a null already.
    fn present(self) -> Field<T> {
        match self {
            Field::Given(Some(value)) => Field::Given(value),
            Field::Absent => Field::Absent,
            Field::Given(None) | Field::Failed => Field::Failed,
        }
    }
}

impl<S: Send + Sync> FromRequest<S> for SettingsBody {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<SettingsBody, ApiError> {
        let body = request_body(req, state).await?;
        // The same answers as every other body (400 for one that is not a JSON object).
        let input = Input::from_json(&body)?;
        let fields = serde_json::from_slice(&body).unwrap_or_default();
        Ok(SettingsBody { input, fields })
    }
}

impl SettingsBody {
    /// The settings the update leads to from `stored`, or 422 with every field refused.
    pub async fn read(
        mut self,
        state: &AppState,
        site_id: i64,
        stored: SmartChargingSettings,
    ) -> Result<SmartChargingSettings, ApiError> {
        let mode = self
            .input
            .one_of("mode", Rules::required(), &MODES)
            .flatten();
        let strategy = self
            .choice("strategy", &STRATEGIES)
            .or_kept(stored.strategy.clone());
        let grid_limit = self.grid_limit().or_kept(stored.grid_limit_amps);
        let min_amps = self.number("min_amps", Rules::optional().between(MIN_AMPS, MAX_AMPS));
        let min_amps = min_amps.present().or_kept(stored.min_amps);
        let margin = self.number("safety_margin_amps", Rules::optional().min(0.0));
        let margin = margin.present().or_kept(stored.safety_margin_amps);
        let fail_safe = self.number("fail_safe_amps", Rules::optional().between(0.0, MAX_AMPS));
        let fail_safe = fail_safe.present().or_kept(stored.fail_safe_amps);
        let timeout = self.integer(
            "meter_timeout_seconds",
            Rules::optional().between(5.0, 3600.0),
        );
        let timeout = timeout.present().or_kept(stored.meter_timeout_seconds);
        let chargers = state.store.site_charger_ids(site_id).await?;
        let priorities = self
            .priorities(&chargers)
            .or_kept(stored.priorities.clone());

        self.check_together(mode.as_deref(), grid_limit, margin, min_amps, fail_safe);
        let meter_id = self.meter(state, site_id, mode.as_deref(), &stored).await?;

        self.input.finish()?;
        match (
            mode, strategy, grid_limit, min_amps, margin, fail_safe, timeout, priorities,
        ) {
            (
                Some(mode),
                Some(strategy),
                Some(grid_limit_amps),
                Some(min_amps),
                Some(safety_margin_amps),
                Some(fail_safe_amps),
                Some(meter_timeout_seconds),
                Some(priorities),
            ) => Ok(SmartChargingSettings {
                mode,
                grid_limit_amps,
                meter_id,
                meter_uuid: None,
                strategy,
                min_amps,
                safety_margin_amps,
                fail_safe_amps,
                meter_timeout_seconds,
                priorities,
                updated_at: None,
            }),
            _ => Err(ApiError::Internal("valid settings were not read".into())),
        }
    }

    /// The rules between fields, on the values the settings end with (a field refused on its
    /// own is not checked again).
    fn check_together(
        &mut self,
        mode: Option<&str>,
        grid_limit: Option<Option<f64>>,
        margin: Option<f64>,
        min_amps: Option<f64>,
        fail_safe: Option<f64>,
    ) {
        if let (Some(mode), Some(None)) = (mode, grid_limit)
            && mode != MODE_DISABLED
        {
            let message = format!("The grid limit amps field is required when mode is {mode}.");
            self.input.fail("grid_limit_amps", message);
        }
        let limit = grid_limit.flatten();
        if let (Some(margin), Some(limit)) = (margin, limit)
            && margin >= limit
        {
            let message = "The safety margin amps field must be less than the grid limit amps.";
            self.input.fail("safety_margin_amps", message);
        } else if let (Some(mode), Some(margin), Some(limit), Some(min)) =
            (mode, margin, limit, min_amps)
            && mode != MODE_DISABLED
            && limit - margin < min - TOLERANCE
        {
            // Else every connector would be given less than the minimum: paused for good.
            let message = "The grid limit amps field minus the safety margin amps must be at \
                least the min amps, to leave room for at least one charging connector at the \
                minimum.";
            self.input.fail("grid_limit_amps", message);
        }
        // Between 0 (pause) and the least a vehicle can take there is no valid limit.
        if let (Some(fail_safe), Some(min)) = (fail_safe, min_amps)
            && fail_safe != 0.0
            && fail_safe < min
        {
            let message =
                format!("The fail safe amps field must be 0 or between {min} and {MAX_AMPS}.");
            self.input.fail("fail_safe_amps", message);
        } else if let (Some(fail_safe), Some(limit)) = (fail_safe, limit)
            && fail_safe > limit
        {
            let message = "The fail safe amps field must be less than or equal to the grid \
                limit amps.";
            self.input.fail("fail_safe_amps", message);
        }
    }

    /// Whether `field` was refused already when the body was read: it holds a NUL character
    /// (in its name, a string or a key), which no store takes (see `Input::new`).
    fn refused_for_nul(&self, field: &str) -> bool {
        self.fields.iter().any(|(name, value)| {
            name.replace('\0', "") == field && (name.contains('\0') || holds_nul(value))
        })
    }

    /// Whether `field` came as text where `kind` ("a number", "an integer") belongs (the
    /// failure is recorded).
    fn text_for_number(&mut self, field: &str, kind: &str) -> bool {
        let text = self.fields.get(field).is_some_and(Value::is_string);
        if text {
            let message = format!("The {} field must be {kind}.", attribute(field));
            self.input.fail(field, message);
        }
        text
    }

    fn number(&mut self, field: &str, rules: Rules) -> Field<Option<f64>> {
        if !self.input.has(field) {
            return Field::Absent;
        }
        if self.text_for_number(field, "a number") {
            return Field::Failed;
        }
        self.input
            .number(field, rules)
            .map_or(Field::Failed, Field::Given)
    }

    fn integer(&mut self, field: &str, rules: Rules) -> Field<Option<i64>> {
        if !self.input.has(field) {
            return Field::Absent;
        }
        if self.text_for_number(field, "an integer") {
            return Field::Failed;
        }
        self.input
            .integer(field, rules)
            .map_or(Field::Failed, Field::Given)
    }

    fn choice(&mut self, field: &str, allowed: &[&str]) -> Field<String> {
        if !self.input.has(field) {
            return Field::Absent;
        }
        let read = self.input.one_of(field, Rules::optional(), allowed);
        read.map_or(Field::Failed, Field::Given).present()
    }

    /// `grid_limit_amps`: null (none), or more than 0 and at most [`MAX_GRID_LIMIT`].
    fn grid_limit(&mut self) -> Field<Option<f64>> {
        let field = "grid_limit_amps";
        match self.number(field, Rules::optional().nullable().max(MAX_GRID_LIMIT)) {
            Field::Given(Some(limit)) if limit <= 0.0 => {
                self.input
                    .fail(field, "The grid limit amps field must be greater than 0.");
                Field::Failed
            }
            other => other,
        }
    }

    /// `priorities`: null (none), or an object of the site's chargers' uuids to integers from
    /// 0 to 100; by uuid.
    fn priorities(&mut self, chargers: &HashMap<String, i64>) -> Field<Vec<(String, i64)>> {
        // A NUL in a key is refused on `priorities` already, not as a key of its own.
        if self.refused_for_nul("priorities") {
            return Field::Failed;
        }
        if !self.input.has("priorities") {
            return Field::Absent;
        }
        let Some(given) = self
            .input
            .object("priorities", Rules::optional().nullable())
        else {
            return Field::Failed;
        };
        let mut priorities = Vec::new();
        let mut valid = true;
        for (uuid, value) in given.unwrap_or_default() {
            let field = format!("priorities.{uuid}");
            if !chargers.contains_key(&uuid) {
                self.input
                    .fail(&field, format!("The selected {field} is invalid."));
                valid = false;
                continue;
            }
            let priority = match &value {
                Value::Number(n) => n.as_i64().or_else(|| {
                    n.as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() <= 100.0)
                        .map(|f| f as i64)
                }),
                _ => None,
            };
            match priority {
                Some(p) if (0..=100).contains(&p) => priorities.push((uuid, p)),
                Some(_) => {
                    let message = format!("The {field} field must be between 0 and 100.");
                    self.input.fail(&field, message);
                    valid = false;
                }
                None => {
                    self.input
                        .fail(&field, format!("The {field} field must be an integer."));
                    valid = false;
                }
            }
        }
        priorities.sort();
        if valid {
            Field::Given(priorities)
        } else {
            Field::Failed
        }
    }

    /// The CT meter's id: the one given (null: none) or the one stored. `dynamic` needs one,
    /// a `ct_meter` attached to a charger of this site; a stored one is checked again then
    /// (its charger may have moved).
    async fn meter(
        &mut self,
        state: &AppState,
        site_id: i64,
        mode: Option<&str>,
        stored: &SmartChargingSettings,
    ) -> Result<Option<i64>, ApiError> {
        let field = "meter_uuid";
        // Refused already: not to be looked up (PostgreSQL fails on a NUL in a query).
        if self.refused_for_nul(field) {
            return Ok(None);
        }
        let given = self.input.has(field);
        let uuid = match self
            .input
            .string(field, Rules::optional().nullable().max(255.0))
        {
            Some(uuid) => uuid,
            None if given => return Ok(None),
            None => stored.meter_uuid.clone(),
        };
        let dynamic = mode == Some(MODE_DYNAMIC);
        let Some(uuid) = uuid else {
            if dynamic {
                self.input.fail(
                    field,
                    "The meter uuid field is required when mode is dynamic.",
                );
            }
            return Ok(None);
        };
        if !given && !dynamic {
            return Ok(stored.meter_id);
        }
        let meter = state.store.site_ct_meter_id(site_id, &uuid).await?;
        if meter.is_none() {
            self.input
                .fail(field, "The selected meter uuid is invalid.");
        }
        Ok(meter)
    }
}
