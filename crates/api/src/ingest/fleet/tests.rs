use super::*;

fn row(id: i64, online: bool, connectors: &[(i64, &str)]) -> FleetRow {
    FleetRow {
        id,
        uuid: format!("uuid-{id}"),
        identity: format!("CP-{id}"),
        reference: None,
        online,
        status: None,
        ocpp_version: Some("1.6".into()),
        last_message_at: Some("2026-01-01T00:00:00.000000Z".into()),
        connectors: connectors
            .iter()
            .map(|(c, s)| (*c, s.to_string()))
            .collect(),
        active: Vec::new(),
    }
}

#[test]
fn many_changes_of_a_charger_are_flushed_once_and_unchanged_reads_not_at_all() {
    let fleet = FleetState::new(Duration::from_secs(60));
    let mut flushes = fleet.follow();
    fleet.take(vec![row(1, false, &[]), row(2, false, &[])]);
    fleet.flush();
    assert_eq!(flushes.try_recv().unwrap().len(), 2, "first seen");
    for status in ["Available", "Preparing", "Charging", "Faulted"] {
        fleet.take(vec![row(1, true, &[(1, status)])]);
    }
    fleet.take(vec![row(2, false, &[])]);
    fleet.flush();
    assert_eq!(
        *flushes.try_recv().unwrap(),
        vec![1],
        "one entry for four changes"
    );
    assert!(fleet.get(1).unwrap().faulted());
    fleet.flush();
    assert!(flushes.try_recv().is_err(), "nothing changed, nothing sent");
}

#[test]
fn the_bus_time_of_a_message_outlives_an_older_store_read() {
    let fleet = FleetState::new(Duration::from_secs(60));
    fleet.take(vec![row(1, true, &[])]);
    let mut record = cms_bus::Record {
        topic: "t.messages".into(),
        key: bytes::Bytes::from_static(b"CP-1"),
        headers: Default::default(),
        value: bytes::Bytes::from_static(b"[]"),
    };
    let at = cms_bus::Header::new(header::RECEIVED_AT, "2026-01-01T00:05:00.000000Z");
    record.headers.push(at);
    let message = Message {
        record,
        partition: 0,
        offset: 0,
    };
    fleet.note_messages(std::slice::from_ref(&message), "t.messages");
    fleet.take(vec![row(1, true, &[])]);
    let held = fleet.get(1).unwrap().row.last_message_at;
    assert_eq!(held.as_deref(), Some("2026-01-01T00:05:00.000000Z"));
}

#[test]
fn power_is_the_newest_total_or_the_sum_of_the_phases() {
    let total = br#"[{"timestamp":"2026-01-01T00:00:00Z","sampledValue":[{"value":"7.4","measurand":"Power.Active.Import","unit":"kW"}]}]"#;
    assert_eq!(power_w(total), Some(7400.0));
    let phases = br#"[{"timestamp":"2026-01-01T00:00:00Z","sampledValue":[{"value":"1000","measurand":"Power.Active.Import","phase":"L1","unit":"W"},{"value":"2000","measurand":"Power.Active.Import","phase":"L2","unit":"W"},{"value":"5","measurand":"Current.Import","unit":"A"}]}]"#;
    assert_eq!(power_w(phases), Some(3000.0));
    let none = br#"[{"timestamp":"2026-01-01T00:00:00Z","sampledValue":[{"value":"12.5","measurand":"Energy.Active.Import.Register"}]}]"#;
    assert_eq!(power_w(none), None);
}
