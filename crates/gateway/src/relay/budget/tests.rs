use super::*;

#[test]
fn a_charger_holds_no_more_than_its_budget_and_a_silent_upstream_no_more_than_its_share() {
    let gateway = Arc::new(GatewayBudget::new(100, 1_000));
    let charger = ChargerBudget::new(gateway.clone());
    let [silent, other] = [charger.upstream(2), charger.upstream(2)];
    // An empty queue takes a call larger than its share (50) while the charger has room.
    let first = silent.admit(60).unwrap();
    assert_eq!(silent.admit(1).unwrap_err(), Over::Share);
    // The other upstream still has room: the silent one did not take it all.
    let second = other.admit(30).unwrap();
    assert_eq!(
        other.admit(15).unwrap_err(),
        Over::Charger,
        "60 + 30 + 15 > 100"
    );
    let third = other.admit(10).unwrap();
    assert_eq!(gateway.held.load(Ordering::Acquire), 100);
    // Written or dropped, a call gives its bytes back.
    drop((first, second, third));
    assert_eq!(gateway.held.load(Ordering::Acquire), 0);
    assert_eq!(charger.held.load(Ordering::Acquire), 0);
    assert!(silent.admit(60).is_ok());
}

#[test]
fn the_gateway_holds_no_more_than_its_total_over_all_chargers() {
    let gateway = Arc::new(GatewayBudget::new(100, 150));
    let one = ChargerBudget::new(gateway.clone()).upstream(1);
    let two = ChargerBudget::new(gateway.clone()).upstream(1);
    let _held = one.admit(100).unwrap();
    assert_eq!(two.admit(51).unwrap_err(), Over::Gateway);
    assert_eq!(two.charger.held.load(Ordering::Acquire), 0, "given back");
    let _also = two.admit(50).unwrap();
    assert_eq!(gateway.held.load(Ordering::Acquire), 150);
}
