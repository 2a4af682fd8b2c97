use super::*;
use crate::test_support::store_test;
use crate::{NewCharger, StateChange};

/// `10:MM:SS` on the test day, in record time form.
fn at(minute: u32, second: u32) -> String {
    format!("2026-11-21T10:{minute:02}:{second:02}.000000Z")
}

fn time(minute: u32, second: u32) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(&at(minute, second))
        .unwrap()
        .with_timezone(&Utc)
}

const TIMEOUT: chrono::Duration = chrono::Duration::seconds(60);

fn alive(server: &str, t: (u32, u32)) -> StateChange {
    StateChange::GatewayAlive {
        server: server.into(),
        at: at(t.0, t.1),
    }
}

fn connected(identity: &str, server: &str, t: (u32, u32)) -> StateChange {
    StateChange::Connected {
        identity: identity.into(),
        session: format!("{identity}-{server}-{}:{}", t.0, t.1),
        server: server.into(),
        at: at(t.0, t.1),
        ocpp_version: Some("1.6".into()),
    }
}

async fn last_seen(store: &Store, server: &str) -> Option<String> {
    sqlx::query_scalar("SELECT last_seen_at FROM gateways WHERE node_id = $1")
        .bind(server)
        .fetch_optional(&store.pool)
        .await
        .unwrap()
}

/// Registers each charger; returns the operator's id and the chargers' uuids, in order.
async fn chargers(store: &Store, identities: &[&str]) -> (i64, Vec<String>) {
    let op = store.ensure_user("op@example.com").await.unwrap();
    let mut uuids = Vec::new();
    for identity in identities {
        let charger = NewCharger {
            identity: identity.to_string(),
            ..Default::default()
        };
        uuids.push(store.add_charger(&charger).await.unwrap());
    }
    (op.id, uuids)
}

/// Each charger's connection status, server and last disconnection, as the API shows them.
async fn shown(
    store: &Store,
    op: i64,
    uuids: &[String],
) -> Vec<(String, Option<String>, Option<String>)> {
    let mut shown = Vec::new();
    for uuid in uuids {
        let c = store.charger_visible_to(op, uuid).await.unwrap().unwrap();
        shown.push((c.connection_status, c.server, c.last_disconnection_at));
    }
    shown
}

fn online(server: &str) -> (String, Option<String>, Option<String>) {
    ("online".into(), Some(server.into()), None)
}

fn offline(server: &str, t: (u32, u32)) -> (String, Option<String>, Option<String>) {
    ("offline".into(), Some(server.into()), Some(at(t.0, t.1)))
}

store_test!(
    a_beacon_records_the_last_sign_of_life_and_an_older_one_does_not_move_it_back,
    |store| {
        store.apply(&[alive("gw-1", (0, 20))]).await.unwrap();
        assert_eq!(last_seen(&store, "gw-1").await, Some(at(0, 20)));
        // Replayed, or held back in a producer: older than what the store has.
        store
            .apply(&[alive("gw-1", (0, 10)), alive("gw-1", (0, 20))])
            .await
            .unwrap();
        assert_eq!(last_seen(&store, "gw-1").await, Some(at(0, 20)));
        store.apply(&[alive("gw-1", (0, 30))]).await.unwrap();
        assert_eq!(last_seen(&store, "gw-1").await, Some(at(0, 30)));
        // A start of a gateway that beacons is a sign of life too.
        let started = |t: (u32, u32), beacons| StateChange::GatewayStarted {
            server: "gw-1".into(),
            at: at(t.0, t.1),
            beacons,
        };
        store.apply(&[started((0, 40), true)]).await.unwrap();
        assert_eq!(last_seen(&store, "gw-1").await, Some(at(0, 40)));
        // An older version started under the same node id (a rollback): it never beacons, so
        // it is forgotten, not judged; an older start of it does not erase a newer beacon.
        store.apply(&[started((0, 35), false)]).await.unwrap();
        assert_eq!(last_seen(&store, "gw-1").await, Some(at(0, 40)));
        store.apply(&[started((0, 50), false)]).await.unwrap();
        assert_eq!(last_seen(&store, "gw-1").await, None);
        assert_eq!(last_seen(&store, "gw-2").await, None);
    }
);

store_test!(
    the_sweep_ends_the_sessions_a_silent_gateway_holds_and_no_others,
    |store| {
        let (op, uuids) = chargers(
            &store,
            &[
                "CP-DEAD-1",
                "CP-DEAD-2",
                "CP-MOVED",
                "CP-LIVE",
                "CP-OLD",
                "CP-LATE",
            ],
        )
        .await;
        store
            .apply(&[
                alive("gw-dead", (0, 10)),
                connected("CP-DEAD-1", "gw-dead", (0, 0)),
                // Connected after gw-dead's last beacon: that connect is its own sign of life.
                connected("CP-DEAD-2", "gw-dead", (0, 20)),
                connected("CP-MOVED", "gw-dead", (0, 0)),
                connected("CP-MOVED", "gw-live", (0, 30)),
                alive("gw-live", (2, 0)),
                connected("CP-LIVE", "gw-live", (0, 0)),
                // gw-old is of a version that never beacons: no row, never judged.
                connected("CP-OLD", "gw-old", (0, 0)),
                // A connect from gw-dead after the cut-off: too recent to judge yet.
                connected("CP-LATE", "gw-dead", (1, 30)),
            ])
            .await
            .unwrap();

        // The timeout counts from the sweep's clock as well: 10:00:10 is not a minute before
        // 10:01:05, however fresh gw-live's beacon.
        let swept = store
            .end_sessions_of_silent_gateways(time(1, 5), TIMEOUT)
            .await
            .unwrap();
        assert_eq!(swept, []);

        let swept = store
            .end_sessions_of_silent_gateways(time(5, 0), TIMEOUT)
            .await
            .unwrap();
        assert_eq!(
            swept,
            [SilentGateway {
                node_id: "gw-dead".into(),
                last_seen_at: at(0, 10),
                sessions_ended: 2,
            }]
        );
        let expected = [
            offline("gw-dead", (0, 10)),
            offline("gw-dead", (0, 20)),
            online("gw-live"),
            online("gw-live"),
            online("gw-old"),
            online("gw-dead"),
        ];
        assert_eq!(shown(&store, op, &uuids).await, expected);
        // The rows changed now: readers that hold them by `updated_at` read them again, even
        // where the session ended at the very time of the row's last change (its connect).
        let dead_2 = store
            .charger_visible_to(op, &uuids[1])
            .await
            .unwrap()
            .unwrap();
        assert_eq!(dead_2.updated_at, at(5, 0));

        // Once is enough: a second sweep ends nothing more.
        let again = store
            .end_sessions_of_silent_gateways(time(5, 0), TIMEOUT)
            .await
            .unwrap();
        assert_eq!(again, []);
        assert_eq!(shown(&store, op, &uuids).await, expected);
    }
);

store_test!(
    api_replicas_sweeping_at_once_end_each_session_once,
    |store| {
        let identities: Vec<String> = (0..200).map(|i| format!("CP-{i}")).collect();
        let names: Vec<&str> = identities.iter().map(String::as_str).collect();
        let (op, uuids) = chargers(&store, &names).await;
        let mut changes = vec![alive("gw-dead", (0, 0)), alive("gw-live", (3, 0))];
        changes.extend(names.iter().map(|id| connected(id, "gw-dead", (0, 0))));
        store.apply(&changes).await.unwrap();

        let sweep = || store.end_sessions_of_silent_gateways(time(5, 0), TIMEOUT);
        let (a, b, c, d) = tokio::join!(sweep(), sweep(), sweep(), sweep());
        let ended: u64 = [a, b, c, d]
            .into_iter()
            .flat_map(Result::unwrap)
            .map(|g| g.sessions_ended)
            .sum();
        assert_eq!(ended, 200);
        let shown = shown(&store, op, &uuids).await;
        assert!(
            shown.iter().all(|s| *s == offline("gw-dead", (0, 0))),
            "{shown:?}"
        );
    }
);

store_test!(no_gateway_is_judged_while_none_is_heard, |store| {
    // Every beacon stopped together: the bus, or this API's consumer, not every gateway.
    let (op, uuids) = chargers(&store, &["CP-1", "CP-2"]).await;
    store
        .apply(&[
            alive("gw-1", (0, 10)),
            alive("gw-2", (0, 15)),
            connected("CP-1", "gw-1", (0, 0)),
            connected("CP-2", "gw-2", (0, 0)),
        ])
        .await
        .unwrap();
    let swept = store
        .end_sessions_of_silent_gateways(time(30, 0), TIMEOUT)
        .await
        .unwrap();
    assert_eq!(swept, []);
    assert_eq!(
        shown(&store, op, &uuids).await,
        [online("gw-1"), online("gw-2")]
    );
});

store_test!(a_disconnect_ends_a_session_once, |store| {
    let (op, uuids) = chargers(&store, &["CP-1"]).await;
    let disconnected = |t: (u32, u32)| StateChange::Disconnected {
        identity: "CP-1".into(),
        session: "CP-1-gw-1-0:0".into(),
        at: at(t.0, t.1),
    };
    store
        .apply(&[connected("CP-1", "gw-1", (0, 0)), disconnected((0, 10))])
        .await
        .unwrap();
    // Replayed, or a second word of the same end: the first stands.
    store.apply(&[disconnected((0, 20))]).await.unwrap();
    assert_eq!(shown(&store, op, &uuids).await, [offline("gw-1", (0, 10))]);
});

store_test!(
    a_beacon_after_the_silence_brings_back_the_sessions_still_open_and_no_others,
    |store| {
        let (op, uuids) = chargers(&store, &["CP-KEPT", "CP-GONE", "CP-MOVED"]).await;
        store
            .apply(&[
                alive("gw-a", (0, 10)),
                connected("CP-KEPT", "gw-a", (0, 0)),
                connected("CP-GONE", "gw-a", (0, 0)),
                connected("CP-MOVED", "gw-a", (0, 0)),
                // gw-a's partition stalls (or the replica reading it is rebalanced) while
                // gw-b's beacons keep coming: gw-a looks silent.
                alive("gw-b", (3, 0)),
            ])
            .await
            .unwrap();
        let swept = store
            .end_sessions_of_silent_gateways(time(3, 0), TIMEOUT)
            .await
            .unwrap();
        assert_eq!(swept[0].sessions_ended, 3);
        // Meanwhile one charger left gw-a (its disconnect comes before the beacon, on its
        // own partition) and one moved to gw-b.
        let gone = StateChange::Disconnected {
            identity: "CP-GONE".into(),
            session: "CP-GONE-gw-a-0:0".into(),
            at: at(1, 0),
        };
        store
            .apply(&[gone, connected("CP-MOVED", "gw-b", (2, 0))])
            .await
            .unwrap();
        // gw-a is heard again: its silence was cms not hearing it.
        store.apply(&[alive("gw-a", (3, 10))]).await.unwrap();
        let shown = shown(&store, op, &uuids).await;
        // Online, the silence kept as its last disconnection: when cms lost sight of it.
        let back = ("online".into(), Some("gw-a".into()), Some(at(0, 10)));
        assert_eq!(shown[0], back, "the session still open");
        assert_eq!(shown[1], offline("gw-a", (0, 10)), "the session that ended");
        let moved = ("online".into(), Some("gw-b".into()), Some(at(0, 10)));
        assert_eq!(shown[2], moved, "the charger that moved");
        // The kept session ends as any other when its disconnect comes after all.
        let kept_ends = StateChange::Disconnected {
            identity: "CP-KEPT".into(),
            session: "CP-KEPT-gw-a-0:0".into(),
            at: at(4, 0),
        };
        store.apply(&[kept_ends]).await.unwrap();
        let after = self::shown(&store, op, &uuids[..1]).await;
        assert_eq!(after[0], offline("gw-a", (4, 0)));
    }
);

store_test!(
    a_gateway_restarted_after_its_silence_brings_back_none_of_its_last_runs_sessions,
    |store| {
        let (op, uuids) = chargers(&store, &["CP-1"]).await;
        store
            .apply(&[
                alive("gw-a", (0, 10)),
                connected("CP-1", "gw-a", (0, 0)),
                alive("gw-b", (3, 0)),
            ])
            .await
            .unwrap();
        store
            .end_sessions_of_silent_gateways(time(3, 0), TIMEOUT)
            .await
            .unwrap();
        let restarted = StateChange::GatewayStarted {
            server: "gw-a".into(),
            at: at(3, 5),
            beacons: true,
        };
        store
            .apply(&[restarted, alive("gw-a", (3, 10))])
            .await
            .unwrap();
        assert_eq!(shown(&store, op, &uuids).await, [offline("gw-a", (0, 10))]);
    }
);
