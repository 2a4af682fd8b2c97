//! A site's smart-charging mode, as the store keeps it (`sites.smart_charging`) and the
//! balancer's planner acts on it.

/// How a site's chargers share its grid connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SmartChargingMode {
    /// Smart charging is off: the balancer clears what it sent and leaves the site alone.
    Disabled,
    /// The chargers share a fixed grid limit.
    Static,
    /// The chargers share what the site's CT meter says is left under the grid limit.
    Dynamic,
}

impl SmartChargingMode {
    /// The word the API and the database use.
    pub const fn as_str(self) -> &'static str {
        match self {
            SmartChargingMode::Disabled => "disabled",
            SmartChargingMode::Static => "static",
            SmartChargingMode::Dynamic => "dynamic",
        }
    }

    /// The mode `text` names, if any.
    pub fn parse(text: &str) -> Option<SmartChargingMode> {
        [Self::Disabled, Self::Static, Self::Dynamic]
            .into_iter()
            .find(|mode| mode.as_str() == text)
    }
}
