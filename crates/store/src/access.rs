//! Who sees what. A user reaches a site through the teams they belong to: the site's owner team
//! has full access, and other teams have the access an accepted invite granted them (basic, with
//! sensitive data while granted and unexpired, to all of the site's chargers or a listed few).
//! Everything else is invisible: the API answers 404, so uuids cannot be probed.

use serde::Serialize;

/// The reference's `permissions` object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Permissions {
    /// May see the resource.
    pub basic: bool,
    /// May see its sensitive data: transactions' id tags and meter readings.
    pub sensitive: bool,
    /// May change it (the owner team).
    pub full: bool,
}

impl Permissions {
    pub fn from_grants(full: i64, sensitive: i64) -> Self {
        Permissions {
            basic: true,
            sensitive: full != 0 || sensitive != 0,
            full: full != 0,
        }
    }
}

/// The sites a user reaches, one row each: `site_id, full_access, sensitive`. Parameters: `$1`
/// the user id, `$2` the current record time (for expiry of sensitive access).
pub const SITE_GRANTS: &str = "
    SELECT site_id, MAX(full_access) AS full_access, MAX(sensitive) AS sensitive FROM (
        SELECT s.id AS site_id, 1 AS full_access, 1 AS sensitive
        FROM sites s JOIN team_user tu ON tu.team_id = s.team_id
        WHERE tu.user_id = $1
        UNION ALL
        SELECT a.site_id, 0,
            CASE WHEN a.sensitive_data = 1 AND (a.sensitive_data_expires_at IS NULL
                OR a.sensitive_data_expires_at > $2) THEN 1 ELSE 0 END
        FROM site_access a JOIN team_user tu ON tu.team_id = a.team_id
        WHERE tu.user_id = $1
    ) site_grant_paths GROUP BY site_id";

/// The chargers a user reaches, one row each: `charger_id, full_access, sensitive`. Same
/// parameters as [`SITE_GRANTS`]; a team whose access is limited to listed assets sees only
/// those chargers.
pub const CHARGER_GRANTS: &str = "
    SELECT charger_id, MAX(full_access) AS full_access, MAX(sensitive) AS sensitive FROM (
        SELECT c.id AS charger_id, 1 AS full_access, 1 AS sensitive
        FROM chargers c JOIN sites s ON s.id = c.site_id
        JOIN team_user tu ON tu.team_id = s.team_id
        WHERE tu.user_id = $1
        UNION ALL
        SELECT c.id, 0,
            CASE WHEN a.sensitive_data = 1 AND (a.sensitive_data_expires_at IS NULL
                OR a.sensitive_data_expires_at > $2) THEN 1 ELSE 0 END
        FROM site_access a JOIN team_user tu ON tu.team_id = a.team_id
        JOIN chargers c ON c.site_id = a.site_id
        WHERE tu.user_id = $1 AND (a.can_access_all_assets = 1 OR EXISTS (
            SELECT 1 FROM site_access_assets x
            WHERE x.site_access_id = a.id AND x.charger_id = c.id))
    ) charger_grant_paths GROUP BY charger_id";
