//! The examples of docs/bus.md are records of the bus types: each ```json <Type>``` block is
//! read into its type and written back unchanged, so the page and the code cannot drift apart.

use cms_bus::{
    ActionReport, ActionRequest, ChargerMessage, ConnectionEvent, FramesAnswer, FramesRequest,
};
use serde_json::Value;

/// Each block of the page marked `json <Type>`: the type's name and the block's text.
fn examples(page: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut lines = page.lines();
    while let Some(line) = lines.next() {
        let Some(kind) = line.strip_prefix("```json ") else {
            continue;
        };
        let body: Vec<&str> = lines
            .by_ref()
            .take_while(|l| !l.starts_with("```"))
            .collect();
        found.push((kind.trim().to_string(), body.join("\n")));
    }
    found
}

/// The example read into `T` and written back, as JSON values.
fn round_trip<'a, T: serde::Deserialize<'a> + serde::Serialize>(text: &'a str) -> (Value, Value) {
    let typed: T = serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let written = serde_json::to_value(&typed).unwrap();
    (serde_json::from_str(text).unwrap(), written)
}

#[test]
fn every_example_of_the_bus_page_is_a_record_of_its_type() {
    let page = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/bus.md"))
        .expect("docs/bus.md");
    let mut events = Vec::new();
    let mut versions = std::collections::BTreeSet::new();
    let mut counts = std::collections::BTreeMap::new();
    for (kind, text) in examples(&page) {
        let (example, written) = match kind.as_str() {
            "ChargerMessage" => round_trip::<ChargerMessage>(&text),
            "ConnectionEvent" => {
                let event: ConnectionEvent = serde_json::from_str(&text).unwrap();
                events.push(event.name());
                round_trip::<ConnectionEvent>(&text)
            }
            "ActionRequest" => {
                let action: ActionRequest = serde_json::from_str(&text).unwrap();
                assert_eq!(
                    action.action.version(),
                    Some(action.ocpp_version),
                    "a call of the version it was taken for: {text}"
                );
                versions.insert(action.ocpp_version.subprotocol());
                round_trip::<ActionRequest>(&text)
            }
            "ActionReport" => round_trip::<ActionReport>(&text),
            "FramesRequest" => round_trip::<FramesRequest>(&text),
            "FramesAnswer" => round_trip::<FramesAnswer>(&text),
            other => panic!("docs/bus.md names no bus type {other:?}"),
        };
        assert_eq!(example, written, "a field the type does not know: {text}");
        *counts.entry(kind).or_insert(0) += 1;
    }
    let kinds: Vec<&str> = counts.keys().map(String::as_str).collect();
    assert_eq!(
        kinds,
        [
            "ActionReport",
            "ActionRequest",
            "ChargerMessage",
            "ConnectionEvent",
            "FramesAnswer",
            "FramesRequest"
        ]
    );
    assert_eq!(
        Vec::from_iter(versions),
        ["ocpp1.6", "ocpp2.0.1"],
        "an action of each OCPP version"
    );
    events.sort_unstable();
    assert_eq!(
        events,
        [
            "connected",
            "disconnected",
            "gateway_alive",
            "gateway_started",
            "refused",
            "upstream"
        ],
        "an example of every connection event"
    );
}
