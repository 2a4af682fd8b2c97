use super::*;
use crate::StateChange;
use crate::actions::{ActionReported, NewAction, SettingsUpdate};
use crate::test_support::{charger_id, store_test};

fn at(s: &str) -> String {
    format!("2026-11-21T10:00:{s}.000000Z")
}

fn variable(component: &str, variable: &str, value: &str) -> ReportedVariable {
    ReportedVariable {
        name: VariableName {
            component: component.into(),
            variable: variable.into(),
            attribute_type: ACTUAL.into(),
            ..Default::default()
        },
        value: Some(value.into()),
        mutability: "ReadWrite".into(),
        ..Default::default()
    }
}

fn reported(variables: Vec<ReportedVariable>, when: &str) -> StateChange {
    StateChange::DeviceModelReported {
        identity: "CS-1".into(),
        variables,
        ended_request: None,
        at: at(when),
    }
}

/// `(key, value, mutability)` of each kept row, in the order listed.
async fn kept(store: &Store, charger: i64) -> Vec<(String, Option<String>, String)> {
    let rows = store.device_model(charger).await.unwrap();
    rows.into_iter()
        .map(|r| (r.key, r.value, r.mutability))
        .collect()
}

fn row(key: &str, value: Option<&str>, mutability: &str) -> (String, Option<String>, String) {
    (key.into(), value.map(Into::into), mutability.into())
}

#[test]
fn a_key_names_every_part_that_is_present() {
    let mut name = VariableName {
        component: "OCPPCommCtrlr".into(),
        variable: "HeartbeatInterval".into(),
        attribute_type: ACTUAL.into(),
        ..Default::default()
    };
    assert_eq!(name.key(), "OCPPCommCtrlr/HeartbeatInterval");
    name = VariableName {
        component: "Connector".into(),
        component_instance: Some("ccs".into()),
        evse_id: Some(1),
        connector_id: Some(2),
        variable: "Power".into(),
        variable_instance: Some("L1".into()),
        attribute_type: "MaxSet".into(),
    };
    assert_eq!(name.key(), "Connector:ccs@1.2/Power:L1#MaxSet");
}

store_test!(
    a_report_is_kept_per_attribute_and_a_later_one_updates_what_it_lists,
    |store| {
        let charger = charger_id(&store, "CS-1").await;
        let mut power_max = variable("EVSE", "Power", "22000");
        power_max.name.evse_id = Some(1);
        power_max.name.attribute_type = "MaxSet".into();
        let mut power = power_max.clone();
        power.name.attribute_type = ACTUAL.into();
        power.value = Some("7400".into());
        power.mutability = "ReadOnly".into();
        power.data_type = Some("decimal".into());
        power.unit = Some("W".into());
        power.max_limit = Some(22000.0);
        let first = vec![
            variable("OCPPCommCtrlr", "HeartbeatInterval", "300"),
            power.clone(),
            power_max,
        ];
        store.apply(&[reported(first, "01")]).await.unwrap();
        assert_eq!(
            kept(&store, charger).await,
            [
                row("EVSE@1/Power", Some("7400"), "ReadOnly"),
                row("EVSE@1/Power#MaxSet", Some("22000"), "ReadWrite"),
                row("OCPPCommCtrlr/HeartbeatInterval", Some("300"), "ReadWrite"),
            ]
        );
        let rows = store.device_model(charger).await.unwrap();
        assert_eq!(
            (rows[0].evse_id, rows[0].attribute_type.as_str()),
            (Some(1), "Actual")
        );
        assert_eq!(
            (rows[0].data_type.as_deref(), rows[0].unit.as_deref()),
            (Some("decimal"), Some("W"))
        );
        assert_eq!(rows[0].max_limit, Some(22000.0));
        assert_eq!(rows[0].updated_at, at("01"));

        // A later report (a GetReport of one variable, say) changes what it lists, keeps the rest.
        power.value = Some("11000".into());
        store.apply(&[reported(vec![power], "02")]).await.unwrap();
        let rows = store.device_model(charger).await.unwrap();
        assert_eq!(rows.len(), 3, "nothing dropped");
        assert_eq!(
            (rows[0].value.as_deref(), rows[0].updated_at.as_str()),
            (Some("11000"), at("02").as_str())
        );
        assert_eq!(rows[2].updated_at, at("01"), "not listed, not touched");

        // Another station's report, and an unknown station's, are theirs.
        let other = charger_id(&store, "CS-2").await;
        let mut theirs = reported(vec![variable("X", "Y", "1")], "03");
        if let StateChange::DeviceModelReported { identity, .. } = &mut theirs {
            *identity = "CS-2".into();
        }
        let mut nobody = theirs.clone();
        if let StateChange::DeviceModelReported { identity, .. } = &mut nobody {
            *identity = "CS-404".into();
        }
        store.apply(&[theirs, nobody]).await.unwrap();
        assert_eq!(
            kept(&store, other).await,
            [row("X/Y", Some("1"), "ReadWrite")]
        );
        assert_eq!(store.device_model(charger).await.unwrap().len(), 3);
    }
);

store_test!(secrets_keep_no_value_as_reported_or_as_set, |store| {
    let charger = charger_id(&store, "CS-1").await;
    let mut write_only = variable("NetworkConfiguration", "ApnPin", "1234");
    write_only.mutability = "WriteOnly".into();
    let mut named = variable("SecurityCtrlr", "BasicAuthPassword", "s3cret-4f1c");
    named.secret = true;
    let plain = variable("OCPPCommCtrlr", "HeartbeatInterval", "300");
    store
        .apply(&[reported(vec![write_only, named, plain], "01")])
        .await
        .unwrap();
    assert_eq!(
        kept(&store, charger).await,
        [
            row("NetworkConfiguration/ApnPin", None, "WriteOnly"),
            row("OCPPCommCtrlr/HeartbeatInterval", Some("300"), "ReadWrite"),
            row("SecurityCtrlr/BasicAuthPassword", None, "ReadWrite"),
        ]
    );

    // Accepted values are kept, but a secret's never: by its mutability, or by its name.
    let sets = vec![
        VariableSet {
            key: "NetworkConfiguration/ApnPin".into(),
            value: "9999".into(),
            secret: false,
        },
        VariableSet {
            key: "SecurityCtrlr/BasicAuthPassword".into(),
            value: "n3w-s3cret".into(),
            secret: true,
        },
        VariableSet {
            key: "OCPPCommCtrlr/HeartbeatInterval".into(),
            value: "60".into(),
            secret: false,
        },
        VariableSet {
            key: "Not/Reported".into(),
            value: "1".into(),
            secret: false,
        },
    ];
    let report = ActionReported {
        identity: "CS-1".into(),
        action: NewAction {
            uuid: "a-1".into(),
            charger_id: 0,
            session: "s-1".into(),
            action: "SetVariables".into(),
            request: "{}".into(),
            requested_by_type: "user".into(),
            requested_by_email: None,
            timeout_ms: 30_000,
            created_at: at("02"),
            expires_at: at("59"),
            ocpp_version: "2.0.1".into(),
            published: true,
        },
        status: "answered".into(),
        response: Some("{}".into()),
        error_code: None,
        error_description: None,
        sent_at: Some(at("02")),
        finished_at: Some(at("03")),
        settings: Some(SettingsUpdate::Variables(sets)),
        credential: None,
        at: at("03"),
    };
    store
        .apply(&[StateChange::ActionReported(Box::new(report))])
        .await
        .unwrap();
    assert_eq!(
        kept(&store, charger).await,
        [
            row("NetworkConfiguration/ApnPin", None, "WriteOnly"),
            row("OCPPCommCtrlr/HeartbeatInterval", Some("60"), "ReadWrite"),
            row("SecurityCtrlr/BasicAuthPassword", None, "ReadWrite"),
        ]
    );
});
