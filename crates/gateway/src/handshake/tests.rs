use super::*;
use OcppVersion::{V16, V201};

fn offered(protocols: &[&str]) -> Vec<String> {
    protocols.iter().map(|p| p.to_string()).collect()
}

#[test]
fn offered_both_versions_the_preferred_one_is_chosen_whatever_the_clients_order() {
    for order in [["ocpp2.0.1", "ocpp1.6"], ["ocpp1.6", "ocpp2.0.1"]] {
        assert_eq!(choose(&offered(&order), V201), Some(V201), "{order:?}");
        assert_eq!(choose(&offered(&order), V16), Some(V16), "{order:?}");
    }
}

#[test]
fn offered_one_version_that_one_is_chosen_whichever_is_preferred() {
    for preferred in [V16, V201] {
        assert_eq!(choose(&offered(&["ocpp1.6"]), preferred), Some(V16));
        assert_eq!(choose(&offered(&["ocpp2.0.1"]), preferred), Some(V201));
        assert_eq!(
            choose(&offered(&["ocpp2.0", "ocpp2.0.1", "x"]), preferred),
            Some(V201)
        );
    }
}

#[test]
fn offered_neither_version_none_is_chosen() {
    for protocols in [&[][..], &["ocpp2.0", "ocpp1.5"], &["OCPP1.6"]] {
        assert_eq!(choose(&offered(protocols), V201), None, "{protocols:?}");
    }
}
