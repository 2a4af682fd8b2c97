//! What `GET` and `PUT .../settings` answer and read, for a 1.6 charger's configuration and a
//! 2.0.1 station's device model alike (`settings.rs`, `settings_v201.rs`).

use crate::http::input::Input;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// Keys one request may change: each is an action queued for the charger (at most 1,000 wait
/// per charger), and one request must not crowd out everyone else's. A charger's whole
/// configuration is typically a few dozen keys.
const MAX_SETTINGS: usize = 100;

/// A configuration key of the charger, as last known; for a 2.0.1 station, an attribute of a
/// variable of its device model (the fields after `updated_at` are null for a 1.6 charger's
/// keys; docs/api.md, "Settings of a 2.0.1 station").
#[derive(Serialize, ToSchema)]
pub struct SettingBody {
    /// 1.6: the configuration key. 2.0.1: the flattened name
    /// `Component[:instance][@evse[.connector]]/Variable[:instance][#AttributeType]`, the
    /// attribute type said only when it is not `Actual` (e.g. `OCPPCommCtrlr/HeartbeatInterval`).
    pub(super) key: String,
    /// Null when the charger reported the key without a value; `***` for a key that carries a
    /// secret (write-only: `AuthorizationKey`, and keys whose name ends in `Password`,
    /// `Passwd`, `Passphrase`, `Secret`, `PrivateKey` or `Psk`; see docs/actions.md; for a
    /// 2.0.1 station also every `WriteOnly` attribute).
    pub(super) value: Option<String>,
    /// 2.0.1: the attribute's mutability is `ReadOnly`.
    pub(super) readonly: bool,
    pub(super) updated_at: String,
    /// 2.0.1: the component's name (e.g. `OCPPCommCtrlr`, `EVSE`, `Connector`).
    pub(super) component: Option<String>,
    pub(super) component_instance: Option<String>,
    /// 2.0.1: the EVSE of the component, when it is one's.
    pub(super) evse_id: Option<i64>,
    /// 2.0.1: the connector within that EVSE, when the component is one's.
    pub(super) connector_id: Option<i64>,
    pub(super) variable: Option<String>,
    pub(super) variable_instance: Option<String>,
    /// 2.0.1: `Actual`, `Target`, `MinSet` or `MaxSet`.
    pub(super) attribute_type: Option<String>,
    /// 2.0.1: `ReadWrite`, `ReadOnly` or `WriteOnly`.
    pub(super) mutability: Option<String>,
    /// 2.0.1: `string`, `decimal`, `integer`, `dateTime`, `boolean`, `OptionList`,
    /// `SequenceList` or `MemberList`, when the station said.
    pub(super) data_type: Option<String>,
    pub(super) unit: Option<String>,
}

/// How one key's change ended.
#[derive(Serialize, ToSchema)]
pub struct SettingChangeBody {
    pub(super) key: String,
    /// The charger's answer (`Accepted`, `Rejected`, `RebootRequired`, `NotSupported`; a
    /// 2.0.1 station's `attributeStatus`: `Accepted`, `Rejected`, `UnknownComponent`,
    /// `UnknownVariable`, `NotSupportedAttributeType`, `RebootRequired`), or the action's
    /// status when it did not end `answered` (`pending` and `sent` while it goes on).
    pub(super) status: String,
    /// The ChangeConfiguration action's uuid (a 2.0.1 station's one SetVariables action, the
    /// same for every key; see Chargers > Actions).
    pub(super) action: String,
}

/// `settings`: an object of 1 to 100 keys, or `None` with the reason told to `input`.
pub(super) fn settings_field(input: &mut Input) -> Option<serde_json::Map<String, Value>> {
    let Some(Some(settings)) = input.object("settings", crate::http::input::Rules::required())
    else {
        return None;
    };
    if settings.is_empty() {
        input.fail("settings", "The settings field must have at least 1 item.");
        return None;
    }
    if settings.len() > MAX_SETTINGS {
        input.fail(
            "settings",
            format!("The settings field must not have more than {MAX_SETTINGS} items."),
        );
        return None;
    }
    Some(settings)
}
