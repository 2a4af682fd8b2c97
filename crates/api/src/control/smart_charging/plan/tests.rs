use super::*;

const NOW: &str = "2026-11-24T12:00:00.000000Z";

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(NOW)
        .unwrap()
        .with_timezone(&Utc)
}

fn ago(seconds: i64) -> String {
    format_record_time(now() - chrono::Duration::seconds(seconds))
}

fn site(mode: &str) -> BalancedSite {
    BalancedSite {
        site_id: 1,
        site_uuid: "site".into(),
        mode: SmartChargingMode::parse(mode).unwrap(),
        grid_limit_amps: Some(100.0),
        strategy: "equal".into(),
        min_amps: 6.0,
        safety_margin_amps: 4.0,
        fail_safe_amps: 8.0,
        meter_timeout_seconds: 10,
        meter_charger_id: Some(99),
        fail_safe_since: None,
    }
}

fn charger(id: i64) -> BalancedCharger {
    BalancedCharger {
        charger_id: id,
        site_id: 1,
        identity: format!("cp-{id}"),
        session: Some(format!("session-{id}")),
        priority: 0,
        smart_licensed: true,
        ocpp_version: None,
    }
}

fn charging(id: i64) -> ChargingConnector {
    ChargingConnector {
        charger_id: id,
        connector_id: 1,
        max_amperage: None,
        transaction_id: id * 10,
        station_transaction_id: None,
        started_at: ago(60),
        external_limit_amps: None,
    }
}

fn limit(id: i64, amps: f64, status: &str, sent: i64) -> SentLimit {
    SentLimit {
        charger_id: id,
        connector_id: 1,
        limit_amps: amps,
        applied_amps: (status == "accepted").then_some(amps),
        purpose: TX_PROFILE.into(),
        transaction_id: Some(id * 10),
        session: format!("session-{id}"),
        action_uuid: format!("action-{id}"),
        status: status.into(),
        sent_at: ago(sent),
        answered_at: None,
        measured_amps: None,
        paused_since: None,
    }
}

/// The charger's default profile, already accepted, so that tests see only the TxProfiles.
fn default_held(id: i64) -> SentLimit {
    SentLimit {
        connector_id: 0,
        purpose: TX_DEFAULT.into(),
        transaction_id: None,
        limit_amps: 8.0,
        status: "accepted".into(),
        ..limit(id, 8.0, "accepted", 60)
    }
}

fn reading(
    charger_id: i64,
    connector_id: i64,
    location: &str,
    amps: f64,
    age: i64,
) -> LatestReading {
    LatestReading {
        charger_id,
        connector_id,
        meter_value: format!(
            r#"[{{"timestamp":"x","sampledValue":[{{"value":"{amps}","measurand":"Current.Import","phase":"L1","location":"{location}"}}]}}]"#
        ),
        measured_at: ago(age),
        updated_at: ago(age),
    }
}

struct Case {
    site: BalancedSite,
    chargers: Vec<BalancedCharger>,
    charging: Vec<ChargingConnector>,
    readings: Vec<LatestReading>,
    limits: Vec<SentLimit>,
    in_flight: HashSet<String>,
}

impl Case {
    fn new(mode: &str, chargers: i64) -> Case {
        Case {
            site: site(mode),
            chargers: (1..=chargers).map(charger).collect(),
            charging: (1..=chargers).map(charging).collect(),
            readings: Vec::new(),
            limits: (1..=chargers).map(default_held).collect(),
            in_flight: HashSet::new(),
        }
    }

    fn plan(&self) -> Plan {
        let chargers: Vec<&BalancedCharger> = self.chargers.iter().collect();
        let charging: Vec<&ChargingConnector> = self.charging.iter().collect();
        let readings = self
            .readings
            .iter()
            .map(|r| ((r.charger_id, r.connector_id), r))
            .collect();
        let limits = self
            .limits
            .iter()
            .map(|l| ((l.charger_id, l.connector_id), l))
            .collect();
        // The grid: the meter's charger's Inlet reading, as the balancer keeps it.
        let grid = self
            .readings
            .iter()
            .find(|r| (r.charger_id, r.connector_id) == (99, 0))
            .map(|r| GridReading {
                phases: crate::control::smart_charging::readings::currents(&r.meter_value, "Inlet")
                    .unwrap(),
                at: r.measured_at.clone(),
            });
        plan(&Inputs {
            site: &self.site,
            chargers: &chargers,
            charging: &charging,
            readings: &readings,
            grid: grid.as_ref(),
            limits: &limits,
            in_flight: &self.in_flight,
            now: now(),
            pacing: Pacing {
                min_interval: Duration::from_secs(3),
                retry_after: Duration::from_secs(30),
                answer_grace: Duration::from_secs(2),
                default_max_amps: 32.0,
            },
        })
    }
}

/// The TxProfile limits sent, by charger.
fn sent(plan: &Plan) -> Vec<(i64, f64)> {
    let mut sent: Vec<(i64, f64)> = plan
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Send(l, _) if l.purpose == TX_PROFILE => Some((l.charger_id, l.limit_amps)),
            _ => None,
        })
        .collect();
    sent.sort_by(|a, b| a.partial_cmp(b).unwrap());
    sent
}

#[test]
fn static_shares_the_limit_less_the_margin_and_new_chargers_get_the_default_profile() {
    let mut case = Case::new("static", 4);
    case.limits.clear();
    let plan = case.plan();
    assert_eq!(
        sent(&plan),
        vec![(1, 24.0), (2, 24.0), (3, 24.0), (4, 24.0)]
    );
    let defaults = plan
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Send(l, _) if l.purpose == TX_DEFAULT && l.limit_amps == 8.0 && l.connector_id == 0))
        .count();
    assert_eq!(
        defaults, 4,
        "each charger starts its transactions at the fail-safe"
    );
    assert_eq!(plan.computation.allocated_amps, Some(96.0));
    assert_eq!(plan.computation.headroom_amps, Some(4.0));
}

#[test]
fn a_charger_without_the_smart_licence_is_left_out_at_its_maximum() {
    let mut case = Case::new("static", 4);
    case.limits.clear();
    case.chargers[3].smart_licensed = false;
    let plan = case.plan();
    // 96 A for the chargers; the unlicensed one may draw its 32 A maximum: 64 A for three.
    assert_eq!(sent(&plan), vec![(1, 21.3), (2, 21.3), (3, 21.3)]);
    let to_unlicensed = plan
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Send(l, _) if l.charger_id == 4))
        .count();
    assert_eq!(
        to_unlicensed, 0,
        "no profile at all, not even the default one"
    );
}

#[test]
fn dynamic_takes_what_the_site_draws_besides_the_chargers_first() {
    let mut case = Case::new("dynamic", 2);
    // The grid reads 50 A, of which the chargers draw 10 A each: the rest of the site 30 A.
    case.readings.push(reading(99, 0, "Inlet", 50.0, 1));
    case.readings.push(reading(1, 1, "Outlet", 10.0, 1));
    case.readings.push(reading(2, 1, "Outlet", 10.0, 1));
    case.limits.push(limit(1, 10.0, "accepted", 60));
    case.limits.push(limit(2, 10.0, "accepted", 60));
    let plan = case.plan();
    // 100 - 4 margin - 30 = 66 A for two: 32 A each at most.
    assert_eq!(sent(&plan), vec![(1, 32.0), (2, 32.0)]);
    assert_eq!(plan.computation.base_load_amps, Some(30.0));
    assert_eq!(plan.computation.available_amps, Some(66.0));
    assert_eq!(plan.computation.headroom_amps, Some(50.0));
    assert_eq!(plan.computation.fail_safe_since, None);
}

#[test]
fn a_charger_that_reports_no_current_is_taken_to_draw_its_limit() {
    let mut case = Case::new("dynamic", 2);
    case.readings.push(reading(99, 0, "Inlet", 70.0, 1));
    case.limits.push(limit(1, 20.0, "accepted", 60));
    case.limits.push(limit(2, 20.0, "accepted", 60));
    let plan = case.plan();
    // Base 70 - 40 = 30; 66 A to share: 32 A each (a raise, due after the interval).
    assert_eq!(plan.computation.base_load_amps, Some(30.0));
    assert_eq!(sent(&plan), vec![(1, 32.0), (2, 32.0)]);
}

#[test]
fn a_quiet_meter_holds_every_charging_connector_at_the_fail_safe_until_it_reads_again() {
    let mut case = Case::new("dynamic", 3);
    case.readings.push(reading(99, 0, "Inlet", 50.0, 11));
    for id in 1..=3 {
        case.limits.push(limit(id, 20.0, "accepted", 1));
    }
    let plan = case.plan();
    assert_eq!(sent(&plan), vec![(1, 8.0), (2, 8.0), (3, 8.0)]);
    assert_eq!(plan.computation.fail_safe_since.as_deref(), Some(NOW));
    // Held at the fail-safe, the next round sends nothing more and keeps the start time.
    case.site.fail_safe_since = Some(ago(5));
    case.limits.truncate(3);
    for id in 1..=3 {
        case.limits.push(limit(id, 8.0, "accepted", 1));
    }
    let plan = case.plan();
    assert_eq!(sent(&plan), vec![]);
    assert_eq!(plan.computation.fail_safe_since, Some(ago(5)));
    // The meter reads again: balancing resumes (a raise, once the interval has passed).
    case.readings[0] = reading(99, 0, "Inlet", 44.0, 0);
    for limit in &mut case.limits[3..] {
        limit.sent_at = ago(4);
    }
    let plan = case.plan();
    assert_eq!(plan.computation.fail_safe_since, None);
    // Base 44 - 24 = 20; 76 A for three: 25.3 each.
    assert_eq!(sent(&plan), vec![(1, 25.3), (2, 25.3), (3, 25.3)]);
}

#[test]
fn small_changes_are_not_sent_cuts_go_at_once_and_raises_wait_their_interval() {
    let mut case = Case::new("static", 4);
    for id in 1..=4 {
        case.limits.push(limit(id, 23.5, "accepted", 1));
    }
    // 24 A each is under 1 A from 23.5: nothing is sent.
    assert_eq!(sent(&case.plan()), vec![]);
    // A raise to 32 A each, a second after the last: wait.
    case.site.grid_limit_amps = Some(200.0);
    assert_eq!(sent(&case.plan()), vec![]);
    for limit in &mut case.limits[4..] {
        limit.sent_at = ago(3);
    }
    assert_eq!(sent(&case.plan()).len(), 4);
    // A cut goes at once however recent the last.
    for limit in &mut case.limits[4..] {
        limit.sent_at = ago(0);
    }
    case.site.grid_limit_amps = Some(60.0);
    assert_eq!(
        sent(&case.plan()),
        vec![(1, 14.0), (2, 14.0), (3, 14.0), (4, 14.0)]
    );
}

#[test]
fn raises_wait_for_the_cuts_of_the_same_round() {
    let mut case = Case::new("static", 2);
    case.limits.push(limit(1, 40.0, "accepted", 10));
    case.limits.push(limit(2, 10.0, "accepted", 10));
    case.charging[0].max_amperage = Some(48);
    case.charging[1].max_amperage = Some(48);
    // 96 A for two: 48 each. Charger 2's raise waits for charger 1's... which is a raise too.
    let plan = case.plan();
    assert_eq!(sent(&plan), vec![(1, 48.0), (2, 48.0)]);
    case.site.grid_limit_amps = Some(54.0);
    // 50 A for two: 25 each: charger 1 is cut now, charger 2's raise waits.
    assert_eq!(sent(&case.plan()), vec![(1, 25.0)]);
}

#[test]
fn a_rejecting_charger_is_taken_to_draw_its_maximum_and_tried_again_later() {
    let mut case = Case::new("static", 3);
    case.limits.push(limit(1, 20.0, "rejected", 5));
    case.limits.push(limit(2, 32.0, "accepted", 60));
    case.limits.push(limit(3, 32.0, "accepted", 60));
    let plan = case.plan();
    // 96 - 32 for the rejecting one = 64 for two, as they have.
    assert_eq!(sent(&plan), vec![]);
    assert_eq!(plan.computation.allocated_amps, Some(96.0));
    case.site.grid_limit_amps = Some(80.0);
    // 76 - 32 = 44: 22 each, and nothing to the rejecting one before its retry time.
    assert_eq!(sent(&case.plan()), vec![(2, 22.0), (3, 22.0)]);
    case.limits[3].sent_at = ago(31);
    assert_eq!(sent(&case.plan()), vec![(1, 25.3), (2, 25.3), (3, 25.3)]);
}

#[test]
fn a_limit_in_flight_is_waited_for_and_one_left_by_another_balancer_is_sent_again() {
    let mut case = Case::new("static", 1);
    case.limits.push(limit(1, 20.0, "pending", 1));
    case.in_flight.insert("action-1".into());
    assert_eq!(sent(&case.plan()), vec![]);
    case.in_flight.clear();
    assert_eq!(sent(&case.plan()), vec![(1, 32.0)]);
}

#[test]
fn a_new_session_or_transaction_is_sent_its_limit_and_an_ended_one_forgotten() {
    let mut case = Case::new("static", 2);
    case.limits.push(limit(1, 32.0, "accepted", 60));
    case.limits.push(limit(2, 32.0, "accepted", 60));
    case.chargers[0].session = Some("reconnected".into());
    case.charging[1].transaction_id = 999;
    let plan = case.plan();
    // Charger 1 is sent its limit again at once; charger 2's new transaction starts at the
    // default 8 A, so its 32 A is a raise, which waits for that round's cuts.
    assert_eq!(sent(&plan), vec![(1, 32.0)]);
    let forgotten: Vec<i64> = plan
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Forget(l) => Some(l.charger_id),
            _ => None,
        })
        .collect();
    assert_eq!(
        forgotten,
        vec![2],
        "the ended transaction's limit ended with it"
    );
}

#[test]
fn turned_off_every_profile_cms_set_is_cleared_from_online_chargers() {
    let mut case = Case::new("disabled", 2);
    case.limits.push(limit(1, 20.0, "accepted", 60));
    case.chargers[1].session = None;
    let plan = case.plan();
    let mut cleared: Vec<(i64, i64)> = plan
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Clear(l, _) => Some((l.charger_id, l.connector_id)),
            _ => None,
        })
        .collect();
    cleared.sort();
    assert_eq!(cleared, vec![(1, 0), (1, 1)], "charger 2 is offline: later");
    assert_eq!(plan.steps.len(), 2);
}

#[test]
fn a_paused_connector_records_since_when_and_keeps_it() {
    let mut case = Case::new("static", 3);
    case.site.grid_limit_amps = Some(17.0);
    case.limits.clear();
    let plan = case.plan();
    // 13 A: room for two at 6 A (and the margin a newcomer needs); the third is paused.
    assert_eq!(sent(&plan), vec![(1, 6.5), (2, 6.5), (3, 0.0)]);
    let paused: Vec<_> = plan
        .connectors
        .iter()
        .filter(|c| c.paused_since.is_some())
        .collect();
    assert_eq!(paused.len(), 1);
    assert_eq!(paused[0].paused_since.as_deref(), Some(NOW));
}

#[test]
fn a_small_cut_goes_when_the_site_holds_more_than_is_available() {
    let mut case = Case::new("dynamic", 6);
    // Six at 7.6 A; the base steps to 55 A: 41 A for six is 6.8 each, a cut of 0.8 A.
    case.readings.push(reading(99, 0, "Inlet", 100.6, 0));
    for id in 1..=6 {
        case.readings.push(reading(id, 1, "Outlet", 7.6, 0));
        case.limits.push(limit(id, 7.6, "accepted", 1));
    }
    let plan = case.plan();
    assert_eq!(plan.computation.available_amps, Some(41.0));
    assert_eq!(sent(&plan).len(), 6, "{:?}", sent(&plan));
    assert!(sent(&plan).iter().all(|&(_, amps)| amps == 6.8));
    // The same cut out of fairness alone (the site has room) waits for a larger change.
    case.readings[0] = reading(99, 0, "Inlet", 60.0, 0);
    case.site.grid_limit_amps = Some(250.0);
    for limit in &mut case.limits[6..] {
        limit.limit_amps = 32.0;
    }
    case.charging[0].max_amperage = Some(31);
    assert_eq!(
        sent(&case.plan()),
        vec![],
        "1 A under 32 A is under the hysteresis"
    );
}

#[test]
fn a_car_that_just_started_is_not_taken_off_the_meter_s_reading() {
    let mut case = Case::new("dynamic", 10);
    // The meter read 20 A before the ten cars began: the base load is 20 A, not 0.
    case.readings.push(reading(99, 0, "Inlet", 20.0, 0));
    let plan = case.plan();
    assert_eq!(plan.computation.base_load_amps, Some(20.0));
    assert_eq!(plan.computation.available_amps, Some(76.0));
    assert!(
        sent(&plan).iter().all(|&(_, amps)| amps == 7.6),
        "{:?}",
        sent(&plan)
    );
}

#[test]
fn a_limit_unanswered_or_failed_counts_at_the_higher_of_it_and_the_last_accepted() {
    let mut case = Case::new("static", 4);
    // Charger 1 holds 32 A; its cut to 24 A failed a second ago: it may still draw 32 A.
    let mut failed = limit(1, 24.0, "failed", 1);
    failed.applied_amps = Some(32.0);
    case.limits.push(failed);
    for id in 2..=4 {
        case.limits.push(limit(id, 24.0, "accepted", 60));
    }
    let plan = case.plan();
    // 96 - 32 = 64 for three: 21.3 each, cuts; nothing to charger 1 before its retry.
    assert_eq!(sent(&plan), vec![(2, 21.3), (3, 21.3), (4, 21.3)]);
    assert_eq!(plan.computation.allocated_amps, Some(95.9));

    // Stuck: a cut in flight for longer than the grace counts the same way.
    case.limits[4].status = "pending".into();
    case.limits[4].sent_at = ago(3);
    case.in_flight.insert("action-1".into());
    assert_eq!(sent(&case.plan()), vec![(2, 21.3), (3, 21.3), (4, 21.3)]);
    // Within the grace it is waited for, and counted on.
    case.limits[4].sent_at = ago(1);
    assert_eq!(sent(&case.plan()), vec![]);
}

#[test]
fn a_reading_from_before_an_accepted_cut_counts_no_more_than_the_cut() {
    let mut case = Case::new("dynamic", 2);
    // The grid reads 62 A; charger 1 was cut to 6 A, its last reading (before) says 30 A.
    case.readings.push(reading(99, 0, "Inlet", 62.0, 0));
    case.readings.push(reading(1, 1, "Outlet", 30.0, 20));
    case.readings.push(reading(2, 1, "Outlet", 6.0, 0));
    case.limits.push(limit(1, 6.0, "accepted", 4));
    case.limits.push(limit(2, 6.0, "accepted", 4));
    let plan = case.plan();
    // Base 62 - 12 = 50, not 62 - 36 = 26.
    assert_eq!(plan.computation.base_load_amps, Some(50.0));
    assert_eq!(plan.computation.available_amps, Some(46.0));
}

#[test]
fn a_grid_reading_from_before_a_cut_is_matched_with_the_draws_of_before() {
    let mut case = Case::new("dynamic", 2);
    // Both drew 30 A when the grid read 110 A; both were cut to 6 A since (answered a second
    // ago, after that reading): the base load is 50 A, not 110 - 12 = 98 A.
    case.readings.push(reading(99, 0, "Inlet", 110.0, 2));
    case.readings.push(reading(1, 1, "Outlet", 30.0, 2));
    case.readings.push(reading(2, 1, "Outlet", 30.0, 2));
    for id in 1..=2 {
        let mut cut = limit(id, 6.0, "accepted", 1);
        cut.answered_at = Some(ago(1));
        case.limits.push(cut);
    }
    let plan = case.plan();
    assert_eq!(plan.computation.base_load_amps, Some(50.0));
    assert_eq!(plan.computation.available_amps, Some(46.0));
}

#[test]
fn the_fail_safe_is_per_charger_and_its_connectors_share_it() {
    let mut case = Case::new("dynamic", 1);
    let mut second = charging(1);
    second.connector_id = 2;
    second.transaction_id = 11;
    case.charging.push(second);
    case.readings.push(reading(99, 0, "Inlet", 30.0, 11));
    let plan = case.plan();
    assert!(plan.computation.fail_safe_since.is_some());
    let mut limits: Vec<(i64, f64)> = plan
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Send(l, _) if l.purpose == TX_PROFILE => Some((l.connector_id, l.limit_amps)),
            _ => None,
        })
        .collect();
    limits.sort_by(|a, b| a.partial_cmp(b).unwrap());
    // 8 A for the charger: not 6 A each for two, so one has it and the other waits.
    assert_eq!(limits, vec![(1, 8.0), (2, 0.0)]);
}

#[test]
fn a_profile_whose_clear_went_unanswered_is_sent_again_when_turned_back_on() {
    let mut case = Case::new("static", 1);
    case.limits[0].status = "clearing".into();
    let mut cleared = limit(1, 24.0, "clearing", 5);
    cleared.applied_amps = Some(24.0);
    case.limits.push(cleared);
    let plan = case.plan();
    let defaults = plan
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Send(l, _) if l.purpose == TX_DEFAULT))
        .count();
    assert_eq!(defaults, 1);
    assert_eq!(sent(&plan), vec![(1, 32.0)]);
}

#[test]
fn tx_profiles_take_one_stack_level_per_connector_above_the_default() {
    let mut case = Case::new("static", 1);
    case.limits.clear();
    let plan = case.plan();
    let tx = plan
        .steps
        .iter()
        .find_map(|s| match s {
            Step::Send(l, _) if l.purpose == TX_PROFILE => Some(l.clone()),
            _ => None,
        })
        .unwrap();
    let request = crate::control::smart_charging::set_charging_profile(&tx);
    assert_eq!(request["csChargingProfiles"]["stackLevel"], 1);
    assert_eq!(request["csChargingProfiles"]["chargingProfileId"], 1001);
}

#[test]
fn a_cut_out_of_fairness_is_paced_and_holds_the_raises_it_makes_room_for() {
    let mut case = Case::new("static", 2);
    // 96 A: charger 1 holds 40 A, charger 2 was paused a second ago (room now: a raise).
    case.charging[0].max_amperage = Some(48);
    case.charging[1].max_amperage = Some(48);
    case.limits.push(limit(1, 40.0, "accepted", 1));
    case.limits.push(limit(2, 0.0, "accepted", 1));
    case.site.grid_limit_amps = Some(60.0);
    // 56 A for two: 28 each. Not over (40 + 0 <= 56): charger 1's cut waits its interval, and
    // charger 2's raise with it, so the two never add up past the limit.
    assert_eq!(sent(&case.plan()), vec![]);
    for limit in &mut case.limits[2..] {
        limit.sent_at = ago(3);
    }
    assert_eq!(sent(&case.plan()), vec![(1, 28.0)], "the cut first");
    // Over the limit, a cut goes at once however recent the last.
    case.site.grid_limit_amps = Some(40.0);
    for limit in &mut case.limits[2..] {
        limit.sent_at = ago(0);
    }
    // 36 A for two: 18 each; charger 2's raise waits for the cut.
    assert_eq!(sent(&case.plan()), vec![(1, 18.0)]);
}

#[test]
fn an_external_limit_below_its_share_caps_an_evse_and_the_rest_goes_to_the_others() {
    // Four connectors share 96 A (24 A each); a 2.0.1 station's EMS holds EVSE 4 at 10 A.
    let mut case = Case::new("static", 4);
    case.limits.clear();
    case.charging[3].external_limit_amps = Some(10.0);
    assert_eq!(
        sent(&case.plan()),
        vec![(1, 28.6), (2, 28.6), (3, 28.6), (4, 10.0)]
    );
    // One below the minimum still gets the minimum (what the site counts it at).
    case.charging[3].external_limit_amps = Some(2.0);
    assert_eq!(
        sent(&case.plan()),
        vec![(1, 30.0), (2, 30.0), (3, 30.0), (4, 6.0)]
    );
}
