//! Chargers > Settings of an OCPP 2.0.1 station: its device model, one row per attribute of a
//! variable of a component, kept as its NotifyReports list them (an upsert: what a report does
//! not list is kept, see docs/decisions.md) and as accepted SetVariables change them. A secret
//! (a write-only attribute, or a variable the ingest names secret) keeps no value.

use crate::{Result, Store};
use sqlx::AnyConnection;

/// The attribute type a key leaves unsaid.
pub const ACTUAL: &str = "Actual";
/// The mutability of an attribute whose value a station never tells.
pub const WRITE_ONLY: &str = "WriteOnly";

/// What names one attribute of a station's device model.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VariableName {
    pub component: String,
    pub component_instance: Option<String>,
    pub evse_id: Option<i64>,
    pub connector_id: Option<i64>,
    pub variable: String,
    pub variable_instance: Option<String>,
    /// Actual, Target, MinSet or MaxSet.
    pub attribute_type: String,
}

impl VariableName {
    /// The flattened name the REST API shows and takes:
    /// `Component[:instance][@evse[.connector]]/Variable[:instance][#AttributeType]`, the
    /// attribute type said only when it is not Actual (e.g. `OCPPCommCtrlr/HeartbeatInterval`,
    /// `EVSE@1/Power#MaxSet`, `Connector@1.2/Available`).
    pub fn key(&self) -> String {
        let mut key = self.component.clone();
        if let Some(instance) = &self.component_instance {
            key.push(':');
            key.push_str(instance);
        }
        if let Some(evse) = self.evse_id {
            key.push_str(&format!("@{evse}"));
            if let Some(connector) = self.connector_id {
                key.push_str(&format!(".{connector}"));
            }
        }
        key.push('/');
        key.push_str(&self.variable);
        if let Some(instance) = &self.variable_instance {
            key.push(':');
            key.push_str(instance);
        }
        if self.attribute_type != ACTUAL {
            key.push('#');
            key.push_str(&self.attribute_type);
        }
        key
    }
}

/// One attribute as a station reported it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReportedVariable {
    pub name: VariableName,
    pub value: Option<String>,
    /// ReadWrite, ReadOnly or WriteOnly.
    pub mutability: String,
    /// A secret by its name (cms_ocpp's rule, which the ingest applies): no value is kept.
    pub secret: bool,
    pub persistent: Option<bool>,
    pub constant: Option<bool>,
    pub data_type: Option<String>,
    pub unit: Option<String>,
    pub min_limit: Option<f64>,
    pub max_limit: Option<f64>,
    /// The allowed values of an OptionList, MemberList or SequenceList, comma-separated.
    pub values_list: Option<String>,
}

/// A value a station accepted (SetVariables), by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariableSet {
    pub key: String,
    pub value: String,
    /// A secret by its name: no value is kept.
    pub secret: bool,
}

/// One attribute as kept.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow)]
pub struct VariableRow {
    pub key: String,
    pub component: String,
    pub component_instance: Option<String>,
    pub evse_id: Option<i64>,
    pub connector_id: Option<i64>,
    pub variable: String,
    pub variable_instance: Option<String>,
    pub attribute_type: String,
    pub value: Option<String>,
    pub mutability: String,
    pub persistent: Option<i64>,
    pub constant: Option<i64>,
    pub data_type: Option<String>,
    pub unit: Option<String>,
    pub min_limit: Option<f64>,
    pub max_limit: Option<f64>,
    pub values_list: Option<String>,
    pub updated_at: String,
}

impl Store {
    /// A station's device model as kept, by key (byte order, the same on both backends);
    /// empty for a 1.6 charger.
    pub async fn device_model(&self, charger_id: i64) -> Result<Vec<VariableRow>> {
        let mut rows: Vec<VariableRow> = sqlx::query_as(
            "SELECT key, component, component_instance, evse_id, connector_id, variable,
               variable_instance, attribute_type, value, mutability, persistent, constant,
               data_type, unit, min_limit, max_limit, values_list, updated_at
             FROM charger_variables WHERE charger_id = $1",
        )
        .bind(charger_id)
        .fetch_all(self.db())
        .await?;
        rows.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(rows)
    }
}

/// Keeps what one NotifyReport lists of the station `identity`'s device model (an unknown
/// station's report changes nothing).
pub(crate) async fn keep_report(
    db: &mut AnyConnection,
    identity: &str,
    variables: &[ReportedVariable],
    at: &str,
) -> Result<()> {
    let Some(charger_id): Option<i64> =
        sqlx::query_scalar("SELECT id FROM chargers WHERE identity = $1")
            .bind(identity)
            .fetch_optional(&mut *db)
            .await?
    else {
        return Ok(());
    };
    for reported in variables {
        let name = &reported.name;
        let keeps_value = !reported.secret && reported.mutability != WRITE_ONLY;
        sqlx::query(
            "INSERT INTO charger_variables (charger_id, key, component, component_instance,
               evse_id, connector_id, variable, variable_instance, attribute_type, value,
               mutability, persistent, constant, data_type, unit, min_limit, max_limit,
               values_list, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
               CAST($16 AS DOUBLE PRECISION), CAST($17 AS DOUBLE PRECISION), $18, $19)
             ON CONFLICT (charger_id, key) DO UPDATE SET value = excluded.value,
               mutability = excluded.mutability, persistent = excluded.persistent,
               constant = excluded.constant, data_type = excluded.data_type,
               unit = excluded.unit, min_limit = excluded.min_limit,
               max_limit = excluded.max_limit, values_list = excluded.values_list,
               updated_at = excluded.updated_at",
        )
        .bind(charger_id)
        .bind(name.key())
        .bind(&name.component)
        .bind(&name.component_instance)
        .bind(name.evse_id)
        .bind(name.connector_id)
        .bind(&name.variable)
        .bind(&name.variable_instance)
        .bind(&name.attribute_type)
        .bind(reported.value.as_ref().filter(|_| keeps_value))
        .bind(&reported.mutability)
        .bind(reported.persistent.map(i64::from))
        .bind(reported.constant.map(i64::from))
        .bind(&reported.data_type)
        .bind(&reported.unit)
        // As text: sqlx's Any driver declares a null f64 to PostgreSQL as a float4, and the
        // statement, cached so, then refuses a float8 (sqlx 0.8.6, any/arguments.rs).
        .bind(reported.min_limit.map(|limit| limit.to_string()))
        .bind(reported.max_limit.map(|limit| limit.to_string()))
        .bind(&reported.values_list)
        .bind(at)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}

/// Keeps the values a station accepted; a key the model does not hold changes nothing (the
/// next report brings it), a secret's value is not kept.
pub(crate) async fn keep_sets(
    db: &mut AnyConnection,
    charger_id: i64,
    sets: &[VariableSet],
    at: &str,
) -> Result<()> {
    for set in sets {
        sqlx::query(
            "UPDATE charger_variables
             SET value = CASE WHEN mutability = $1 OR $2 = 1 THEN NULL ELSE $3 END,
               updated_at = $4
             WHERE charger_id = $5 AND key = $6",
        )
        .bind(WRITE_ONLY)
        .bind(i64::from(set.secret))
        .bind(&set.value)
        .bind(at)
        .bind(charger_id)
        .bind(&set.key)
        .execute(&mut *db)
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
