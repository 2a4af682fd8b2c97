//! The borrowed `Json` tree comes out the same from simd-json as from serde_json.

use std::borrow::Cow;

use cms_ocpp::Json;
use cms_ocpp::v16::{Action, parse_request, parse_request_json};

const FRAME: &str = r#"[2,"caf\u00e9-\"7\"","MeterValues",{"connectorId":1,"transactionId":-5,"meterValue":[{"timestamp":"2026-11-21T10:15:00Z","sampledValue":[{"value":"15243.7","measurand":"Energy.Active.Import.Register","unit":"Wh"},{"value":"1.5e3","context":"Trigger"}]}],"n":[null,true,1.25,18446744073709551615]}]"#;

#[test]
fn simd_json_and_serde_json_build_the_same_tree() {
    let from_serde: Json<'_> = serde_json::from_str(FRAME).unwrap();
    let mut scratch = FRAME.as_bytes().to_vec();
    let from_simd: Json<'_> = simd_json::serde::from_slice(&mut scratch).unwrap();
    assert_eq!(from_simd, from_serde);
}

#[test]
fn simd_json_tree_borrows_plain_strings_from_its_buffer() {
    let mut scratch = FRAME.as_bytes().to_vec();
    let range = scratch.as_ptr() as usize..scratch.as_ptr() as usize + scratch.len();
    let tree: Json<'_> = simd_json::serde::from_slice(&mut scratch).unwrap();
    let Json::Array(elements) = tree else {
        panic!("array expected")
    };
    let Json::Str(Cow::Borrowed(action)) = &elements[2] else {
        panic!("borrowed action expected: {:?}", elements[2])
    };
    assert_eq!(*action, "MeterValues");
    assert!(range.contains(&(action.as_ptr() as usize)));
}

#[test]
fn a_simd_json_payload_tree_validates_like_the_text() {
    let payload = r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:15:00Z","sampledValue":[{"value":"7","phase":"L1"}]}]}"#;
    let mut scratch = payload.as_bytes().to_vec();
    let tree: Json<'_> = simd_json::serde::from_slice(&mut scratch).unwrap();
    let from_simd = parse_request_json(Action::MeterValues, tree).unwrap();
    assert_eq!(
        from_simd,
        parse_request(Action::MeterValues, payload).unwrap()
    );
}
