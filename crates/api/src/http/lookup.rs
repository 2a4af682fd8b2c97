//! The look-ups handlers start with, and the answers they give, in one place so that every
//! endpoint refuses alike: a resource the caller cannot see is a 404 worded as for one that
//! does not exist (uuids and ids cannot be probed); one they see but may not change, or whose
//! sensitive data they may not read, is a 403.

use crate::http::AppState;
use crate::http::auth::Caller;
use crate::http::error::ApiError;
use cms_store::access_log::{ChargerAccess, VisibleCharger};
use cms_store::{ChargerRow, Permissions};
use std::str::FromStr;

/// 404 `"<thing> not found."`.
pub fn not_found(thing: &str) -> ApiError {
    ApiError::NotFound(format!("{thing} not found."))
}

/// 403 unless `allowed`: for a resource the caller sees, but may not do this with.
pub fn forbidden_unless(allowed: bool) -> Result<(), ApiError> {
    if allowed {
        Ok(())
    } else {
        Err(ApiError::Forbidden)
    }
}

/// A numeric path segment naming a `thing`: one that does not parse names nothing, a 404.
pub fn path_number<T: FromStr>(segment: &str, thing: &str) -> Result<T, ApiError> {
    segment.parse().map_err(|_| not_found(thing))
}

/// The charger `charger_uuid` if the caller sees it, with their permissions; else 404.
pub async fn visible_charger(
    state: &AppState,
    caller: &Caller,
    charger_uuid: &str,
) -> Result<ChargerRow, ApiError> {
    // Who sees it from memory (crate::http::access); the row, which changes with the charger's
    // traffic, by primary key.
    let visible = visible_of(charger_access(state, caller, charger_uuid).await?);
    let mut rows = state.store.chargers_by_id(&[visible]).await?;
    rows.pop().ok_or_else(|| not_found("Charger"))
}

/// [`visible_charger`] for a read that may show its row up to 0.1 s old: as held by this
/// replica, checked against the store at most that often (crate::http::charger_rows), so that a
/// poller costs the store little.
pub async fn held_charger(
    state: &AppState,
    caller: &Caller,
    charger_uuid: &str,
) -> Result<ChargerRow, ApiError> {
    let visible = visible_of(charger_access(state, caller, charger_uuid).await?);
    let mut rows = state.charger_rows.page(&state.store, &[visible]).await?;
    rows.pop().ok_or_else(|| not_found("Charger"))
}

fn visible_of(access: ChargerAccess) -> VisibleCharger {
    VisibleCharger {
        id: access.id,
        site_id: access.site_id,
        permissions: access.permissions,
    }
}

/// [`visible_charger`], when the caller may also read its sensitive data (meter readings,
/// id tags): a team granted only basic access sees the charger, not what it measures (403).
pub async fn charger_with_sensitive_data(
    state: &AppState,
    caller: &Caller,
    charger_uuid: &str,
) -> Result<ChargerRow, ApiError> {
    let charger = visible_charger(state, caller, charger_uuid).await?;
    forbidden_unless(charger.permissions.sensitive)?;
    Ok(charger)
}

/// The caller's access to the charger `charger_uuid`, from memory once asked (crate::http::access):
/// 404 when they do not see it.
pub async fn charger_access(
    state: &AppState,
    caller: &Caller,
    charger_uuid: &str,
) -> Result<ChargerAccess, ApiError> {
    state
        .access
        .charger(&state.store, caller.user_id(), charger_uuid)
        .await?
        .ok_or_else(|| not_found("Charger"))
}

/// The caller's access to the charger `charger_uuid`, from memory once asked (crate::http::access),
/// when they may read its sensitive data: 404 when they do not see it, 403 when they see it
/// without its sensitive data. What reads of meter values start with.
pub async fn charger_access_with_sensitive_data(
    state: &AppState,
    caller: &Caller,
    charger_uuid: &str,
) -> Result<ChargerAccess, ApiError> {
    let access = charger_access(state, caller, charger_uuid).await?;
    forbidden_unless(access.permissions.sensitive)?;
    Ok(access)
}

/// The site `site_uuid` (its id and the caller's permissions) if the caller reaches it; else
/// 404.
pub async fn visible_site(
    state: &AppState,
    caller: &Caller,
    site_uuid: &str,
) -> Result<(i64, Permissions), ApiError> {
    let access = state
        .access
        .site(&state.store, caller.user_id(), site_uuid)
        .await?
        .ok_or_else(|| not_found("Site"))?;
    Ok((access.id, access.permissions))
}

/// The id of site `site_uuid` if the caller's team owns it: 404 if the caller does not reach
/// it, 403 if it reaches it as a guest.
pub async fn owned_site(
    state: &AppState,
    caller: &Caller,
    site_uuid: &str,
) -> Result<i64, ApiError> {
    let (site_id, permissions) = visible_site(state, caller, site_uuid).await?;
    forbidden_unless(permissions.full)?;
    Ok(site_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_number_that_does_not_parse_is_not_found() {
        assert_eq!(path_number::<i64>("42", "Token").ok(), Some(42));
        for bad in ["", "x", "4.2", "99999999999999999999"] {
            let Err(ApiError::NotFound(message)) = path_number::<i64>(bad, "Token") else {
                panic!("{bad:?} is a number");
            };
            assert_eq!(message, "Token not found.");
        }
        assert!(path_number::<u32>("-1", "Connector").is_err());
    }
}
