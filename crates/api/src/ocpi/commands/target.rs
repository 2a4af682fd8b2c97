//! What a command names, as the party may see it: a location (the site's uuid), an EVSE (the
//! charger's uuid) and a connector (its number as text). Anything else is an unknown location
//! (404, 2003): a site of another team is never told apart from none.

use super::super::reply::OcpiError;
use crate::control::actions::charger_version;
use crate::http::AppState;
use cms_ocpp::OcppVersion;
use cms_store::ocpi::commands::Evse;
use cms_store::ocpi::parties::Party;

/// The charger a command is for, and the OCPP version it speaks.
pub struct Target {
    pub evse: Evse,
    pub version: OcppVersion,
}

/// The EVSE `evse_uid` of location `location_id`; without `evse_uid`, the location's only
/// charger. `Ok(Err(why))` when the location has no single charger to choose.
pub async fn evse(
    state: &AppState,
    party: &Party,
    location_id: &str,
    evse_uid: Option<&str>,
) -> Result<Result<Target, String>, OcpiError> {
    let store = &state.store;
    let site = store
        .ocpi_command_location(party.provider_id, location_id)
        .await?
        .ok_or_else(OcpiError::unknown_location)?;
    let mut chargers = store.ocpi_command_evses(site, evse_uid).await?;
    if evse_uid.is_some() && chargers.is_empty() {
        return Err(OcpiError::unknown_location());
    }
    if chargers.len() != 1 {
        let count = chargers.len();
        return Ok(Err(format!(
            "Name an EVSE (evse_uid): this location has {count} EVSEs."
        )));
    }
    let evse = chargers.remove(0);
    let version = charger_version(evse.ocpp_version.as_deref());
    Ok(Ok(Target { evse, version }))
}

/// A connector id: the connector's number (a 1.6 connector, a 2.0.1 EVSE), 1 or more; any
/// other text names no connector of cms's (2003).
pub fn connector(connector_id: &str) -> Result<i64, OcpiError> {
    match connector_id.parse::<i64>() {
        Ok(number) if (1..=i64::from(i32::MAX)).contains(&number) => Ok(number),
        _ => Err(OcpiError::unknown_location()),
    }
}

/// The longest id tag `version` carries: 1.6's idTag is CiString20, 2.0.1's idToken 36.
pub fn longest_tag(version: OcppVersion) -> usize {
    match version {
        OcppVersion::V16 => 20,
        OcppVersion::V201 => 36,
    }
}

/// Why `uid` cannot be this charger's id tag, if it cannot.
pub fn tag_problem(uid: &str, version: OcppVersion) -> Option<String> {
    let longest = longest_tag(version);
    (uid.len() > longest).then(|| {
        format!("The token's uid is longer than this charger's OCPP version takes ({longest}).")
    })
}
