//! A 2.0.1 station's device model from the bus: what a NotifyReport lists (a charger message),
//! and what values an answered SetVariables says the station took (an action's report). The
//! names a station gives (component, EVSE, variable, attribute type) become the store's
//! flattened keys here, for both.

use cms_bus::ChargerMessage;
use cms_ocpp::v16::secrets::is_secret_key;
use cms_store::StateChange;
use cms_store::device_model::{ACTUAL, ReportedVariable, VariableName, VariableSet};
use serde::Deserialize;
use serde_json::Value;

/// The charger message this module reads.
pub(crate) const NOTIFY_REPORT: &str = "NotifyReport";

/// A NotifyReport, as far as the device model needs it (seqNo and generatedAt are not: each
/// part is kept as it comes; requestId and tbc say when the report ended).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NotifyReport {
    #[serde(default)]
    report_data: Vec<ReportData>,
    request_id: Option<i64>,
    #[serde(default)]
    tbc: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ReportData {
    component: Component,
    variable: Variable,
    variable_attribute: Vec<Attribute>,
    variable_characteristics: Option<Characteristics>,
}

/// ComponentType (also of SetVariables' data and results).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Component {
    pub name: String,
    pub instance: Option<String>,
    pub evse: Option<Evse>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Evse {
    pub id: i64,
    pub connector_id: Option<i64>,
}

/// VariableType.
#[derive(Deserialize)]
pub(crate) struct Variable {
    pub name: String,
    pub instance: Option<String>,
}

#[derive(Deserialize)]
struct Attribute {
    #[serde(rename = "type")]
    kind: Option<String>,
    value: Option<String>,
    mutability: Option<String>,
    persistent: Option<bool>,
    constant: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Characteristics {
    unit: Option<String>,
    data_type: Option<String>,
    min_limit: Option<f64>,
    max_limit: Option<f64>,
    values_list: Option<String>,
}

/// Whether a variable's value is a secret by its name (1.6's rule for configuration keys:
/// `BasicAuthPassword`, `...Secret`, `...PrivateKey`, ...). A write-only attribute is one too.
pub(crate) fn is_secret_variable(variable: &str) -> bool {
    is_secret_key(variable)
}

/// The store's name of one attribute (Actual when the type is not given).
pub(crate) fn variable_name(
    component: &Component,
    variable: &Variable,
    attribute_type: Option<&str>,
) -> VariableName {
    VariableName {
        component: component.name.clone(),
        component_instance: component.instance.clone(),
        evse_id: component.evse.as_ref().map(|evse| evse.id),
        connector_id: component.evse.as_ref().and_then(|evse| evse.connector_id),
        variable: variable.name.clone(),
        variable_instance: variable.instance.clone(),
        attribute_type: attribute_type.unwrap_or(ACTUAL).to_string(),
    }
}

/// The change a NotifyReport record of a 2.0.1 station makes (`None` for one of a 1.6
/// charger, which has no such call, or a payload that does not read).
pub(crate) fn report_change(
    identity: String,
    told: &ChargerMessage<'_>,
    payload: &[u8],
    at: String,
) -> Option<StateChange> {
    if told.ocpp_version == Some("ocpp1.6") {
        return None;
    }
    let report: NotifyReport = match serde_json::from_slice(payload) {
        Ok(report) => report,
        Err(e) => {
            // The gateway validated it; a record that fails here came from elsewhere.
            tracing::warn!(%identity, error = %e, "skipping unreadable NotifyReport");
            return None;
        }
    };
    let mut variables = Vec::new();
    for data in &report.report_data {
        let characteristics = data.variable_characteristics.as_ref();
        for attribute in &data.variable_attribute {
            variables.push(ReportedVariable {
                name: variable_name(&data.component, &data.variable, attribute.kind.as_deref()),
                value: attribute.value.clone(),
                mutability: attribute
                    .mutability
                    .clone()
                    .unwrap_or_else(|| "ReadWrite".into()),
                secret: is_secret_variable(&data.variable.name),
                persistent: attribute.persistent,
                constant: attribute.constant,
                data_type: characteristics.and_then(|c| c.data_type.clone()),
                unit: characteristics.and_then(|c| c.unit.clone()),
                min_limit: characteristics.and_then(|c| c.min_limit),
                max_limit: characteristics.and_then(|c| c.max_limit),
                values_list: characteristics.and_then(|c| c.values_list.clone()),
            });
        }
    }
    Some(StateChange::DeviceModelReported {
        identity,
        variables,
        ended_request: report.request_id.filter(|_| !report.tbc),
        at,
    })
}

/// The key of one entry of a SetVariables request (`setVariableData[]`) or answer
/// (`setVariableResult[]`), both of which name it with component, variable and attributeType.
pub(crate) fn key_of(entry: &Value) -> Option<String> {
    let component: Component = serde_json::from_value(entry["component"].clone()).ok()?;
    let variable: Variable = serde_json::from_value(entry["variable"].clone()).ok()?;
    let name = variable_name(&component, &variable, entry["attributeType"].as_str());
    Some(name.key())
}

/// The station's answer to each key of an answered SetVariables, in the answer's order.
pub(crate) fn answers(response: &Value) -> Vec<(String, String)> {
    let results = response["setVariableResult"].as_array();
    results
        .into_iter()
        .flatten()
        .filter_map(|result| {
            let status = result["attributeStatus"].as_str()?;
            Some((key_of(result)?, status.to_string()))
        })
        .collect()
}

/// The values an answered SetVariables says the station took (Accepted, or RebootRequired:
/// taken, in force from its reboot on, as 1.6's ChangeConfiguration counts it).
pub(crate) fn accepted_sets(request: &Value, response: &Value) -> Vec<VariableSet> {
    let asked = request["setVariableData"].as_array();
    let answered = answers(response);
    asked
        .into_iter()
        .flatten()
        .filter_map(|data| {
            let key = key_of(data)?;
            let (_, status) = answered.iter().find(|(k, _)| *k == key)?;
            if !matches!(status.as_str(), "Accepted" | "RebootRequired") {
                return None;
            }
            Some(VariableSet {
                value: data["attributeValue"].as_str()?.to_string(),
                secret: is_secret_variable(data["variable"]["name"].as_str()?),
                key,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
