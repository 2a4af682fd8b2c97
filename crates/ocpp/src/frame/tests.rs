use super::*;

fn error(text: &str) -> FrameError {
    match parse_frame(text) {
        Ok(frame) => panic!("{text:?} parsed as {frame:?}"),
        Err(e) => e,
    }
}

fn protocol_error(text: &str, message_id: Option<&str>) {
    let e = error(text);
    assert_eq!(e.code, ErrorCode::ProtocolError, "{text}: {e}");
    assert_eq!(e.message_id.as_deref(), message_id, "{text}: {e}");
}

#[test]
fn call_parses() {
    let text = r#"[2,"19223201","BootNotification",{"chargePointVendor":"VendorX","chargePointModel":"SingleSocketCharger"}]"#;
    let Frame::Call {
        message_id,
        action,
        payload,
    } = parse_frame(text).unwrap()
    else {
        panic!("not a CALL")
    };
    assert_eq!(message_id, "19223201");
    assert_eq!(action, "BootNotification");
    assert_eq!(
        payload.get(),
        r#"{"chargePointVendor":"VendorX","chargePointModel":"SingleSocketCharger"}"#
    );
}

#[test]
fn call_result_parses() {
    let text = r#"[3,"19223201",{"currentTime":"2013-02-01T20:53:32.486Z","interval":300,"status":"Accepted"}]"#;
    let frame = parse_frame(text).unwrap();
    assert_eq!(frame.message_id(), "19223201");
    let Frame::CallResult { payload, .. } = frame else {
        panic!("not a CALLRESULT")
    };
    assert!(payload.get().starts_with("{\"currentTime\""));
}

#[test]
fn call_error_parses() {
    let text = r#"[4,"162376037","NotSupported","SetDisplayMessageRequest not implemented",{}]"#;
    let Frame::CallError {
        message_id,
        code,
        description,
        details,
    } = parse_frame(text).unwrap()
    else {
        panic!("not a CALLERROR")
    };
    assert_eq!(message_id, "162376037");
    assert_eq!(code, "NotSupported");
    assert_eq!(description, "SetDisplayMessageRequest not implemented");
    assert_eq!(details.get(), "{}");
}

#[test]
fn call_error_details_may_be_any_json() {
    let frame = parse_frame(r#"[4,"1","GenericError","",null]"#).unwrap();
    let Frame::CallError { details, .. } = frame else {
        panic!("not a CALLERROR")
    };
    assert_eq!(details.get(), "null");
}

#[test]
fn whitespace_anywhere_is_fine() {
    let text = " \r\n[ 2 ,\t\"a\" , \"Heartbeat\" ,\n { } ] \n";
    let Frame::Call {
        message_id,
        action,
        payload,
    } = parse_frame(text).unwrap()
    else {
        panic!("not a CALL")
    };
    assert_eq!(
        (&*message_id, &*action, payload.get()),
        ("a", "Heartbeat", "{ }")
    );
}

#[test]
fn text_that_is_not_json_is_a_formation_violation() {
    for text in [
        "",
        "   ",
        "[2,\"1\",\"Heartbeat\",{}",
        "hello",
        "[2,'1','Heartbeat',{}]",
        "\u{feff}[]",
    ] {
        let e = error(text);
        assert_eq!(e.code, ErrorCode::FormationViolation, "{text:?}: {e}");
        assert_eq!(e.message_id, None);
    }
}

#[test]
fn json_that_is_not_an_array_is_a_formation_violation() {
    for text in ["{}", "2", "\"x\"", "null", r#"{"2":"1"}"#] {
        let e = error(text);
        assert_eq!(e.code, ErrorCode::FormationViolation, "{text:?}: {e}");
        assert!(e.description.contains("not a JSON array"), "{e}");
    }
}

#[test]
fn trailing_garbage_is_a_formation_violation() {
    for text in [
        r#"[2,"1","Heartbeat",{}] x"#,
        r#"[2,"1","Heartbeat",{}][]"#,
        "[3,\"1\",{}],",
    ] {
        let e = error(text);
        assert_eq!(e.code, ErrorCode::FormationViolation, "{text:?}: {e}");
    }
}

#[test]
fn wrong_arity_is_a_protocol_error() {
    protocol_error("[]", None);
    protocol_error("[2]", None);
    protocol_error(r#"[2,"id"]"#, Some("id"));
    protocol_error(r#"[2,"id","Heartbeat"]"#, Some("id"));
    protocol_error(r#"[2,"id","Heartbeat",{},{}]"#, Some("id"));
    protocol_error(r#"[3,"id"]"#, Some("id"));
    protocol_error(r#"[3,"id",{},{}]"#, Some("id"));
    protocol_error(r#"[4,"id","GenericError","x"]"#, Some("id"));
    protocol_error(r#"[4,"id","GenericError","x",{},1]"#, Some("id"));
}

#[test]
fn bad_message_type_id_is_a_protocol_error() {
    for type_id in ["1", "5", "0", "-2", "2.0", "\"2\"", "null", "[2]", "20"] {
        protocol_error(&format!(r#"[{type_id},"id","Heartbeat",{{}}]"#), Some("id"));
    }
}

#[test]
fn message_id_must_be_a_non_empty_string_of_at_most_36_chars() {
    let id36 = "a".repeat(36);
    let text = format!(r#"[2,"{id36}","Heartbeat",{{}}]"#);
    let frame = parse_frame(&text).unwrap();
    assert_eq!(frame.message_id(), id36);
    // Characters, not bytes: 36 two-byte characters still fit.
    let wide36 = "é".repeat(36);
    assert!(parse_frame(&format!(r#"[3,"{wide36}",{{}}]"#)).is_ok());

    let id37 = "a".repeat(37);
    protocol_error(&format!(r#"[2,"{id37}","Heartbeat",{{}}]"#), None);
    protocol_error(r#"[2,"","Heartbeat",{}]"#, Some(""));
    protocol_error(r#"[2,17,"Heartbeat",{}]"#, None);
    protocol_error(r#"[2,null,"Heartbeat",{}]"#, None);
    protocol_error(r#"[3,["1"],{}]"#, None);
}

#[test]
fn message_id_is_reported_even_when_something_else_is_wrong() {
    protocol_error(r#"[9,"abc","Heartbeat",{}]"#, Some("abc"));
    protocol_error(r#"[2,"abc",7,{}]"#, Some("abc"));
}

#[test]
fn action_must_be_a_string() {
    protocol_error(r#"[2,"id",7,{}]"#, Some("id"));
    protocol_error(r#"[2,"id",null,{}]"#, Some("id"));
}

#[test]
fn payload_must_be_an_object() {
    for payload in ["[]", "\"{}\"", "null", "1", "true"] {
        protocol_error(&format!(r#"[2,"id","Heartbeat",{payload}]"#), Some("id"));
        protocol_error(&format!(r#"[3,"id",{payload}]"#), Some("id"));
    }
}

#[test]
fn call_error_code_and_description_must_be_strings() {
    protocol_error(r#"[4,"id",1,"x",{}]"#, Some("id"));
    protocol_error(r#"[4,"id","GenericError",null,{}]"#, Some("id"));
}

#[test]
fn escaped_id_and_action_are_unescaped() {
    let text = r#"[2,"id\"\u00e9\\","Heart\u0062eat",{}]"#;
    let Frame::Call {
        message_id, action, ..
    } = parse_frame(text).unwrap()
    else {
        panic!("not a CALL")
    };
    assert_eq!(message_id, "id\"é\\");
    assert_eq!(action, "Heartbeat");
    assert!(matches!(message_id, Cow::Owned(_)));
}

#[test]
fn escapes_count_as_one_character_toward_the_id_limit() {
    let id = r"\u0041".repeat(36);
    assert!(parse_frame(&format!(r#"[3,"{id}",{{}}]"#)).is_ok());
    protocol_error(&format!(r#"[3,"{id}A",{{}}]"#), None);
}

#[test]
fn plain_strings_borrow_from_the_frame() {
    let text = r#"[2,"m-1","MeterValues",{"connectorId":1}]"#;
    let Frame::Call {
        message_id, action, ..
    } = parse_frame(text).unwrap()
    else {
        panic!("not a CALL")
    };
    assert!(matches!(message_id, Cow::Borrowed(_)));
    assert!(matches!(action, Cow::Borrowed(_)));
    assert_eq!(&text[span_in(text, &message_id)], "m-1");
}

#[test]
fn span_in_gives_the_exact_payload_bytes() {
    let text = "[2 , \"1\", \"Authorize\" ,  {\"idTag\" : \"x\"}  ]";
    let Frame::Call { payload, .. } = parse_frame(text).unwrap() else {
        panic!("not a CALL")
    };
    let span = span_in(text, payload.get());
    assert_eq!(&text[span.clone()], "{\"idTag\" : \"x\"}");
    assert_eq!(span, 25..40);
    assert_eq!(span_in(text, text), 0..text.len());
    assert_eq!(span_in(text, &text[text.len()..]), text.len()..text.len());
}

#[test]
#[should_panic(expected = "not borrowed from text")]
fn span_in_rejects_foreign_strings() {
    let other = String::from("{}");
    span_in("[3,\"1\",{}]", &other);
}

#[test]
fn writers_produce_the_documented_shapes() {
    assert_eq!(call_result("1", "{}"), r#"[3,"1",{}]"#);
    let answer = call_result("mv-1", r#"{"status":"Accepted"}"#);
    assert_eq!(
        (answer.len(), answer.capacity()),
        (
            call_result_len("mv-1", r#"{"status":"Accepted"}"#),
            answer.len()
        ),
        "made to measure"
    );
    assert_eq!(
        call("7", "Reset", r#"{"type":"Soft"}"#),
        r#"[2,"7","Reset",{"type":"Soft"}]"#
    );
    assert_eq!(
        call_error("-1", ErrorCode::FormationViolation, "bad"),
        r#"[4,"-1","FormationViolation","bad",{}]"#
    );
}

#[test]
fn writers_escape_and_round_trip() {
    let id = "q\"b\\s/\u{1}\u{1f}\n\r\t\u{8}\u{c}é€😀";
    let description = "line1\nline2 \"quoted\" \\ \u{0}";
    let text = call_error(id, ErrorCode::OccurenceConstraintViolation, description);
    let Frame::CallError {
        message_id,
        code,
        description: d,
        details,
    } = parse_frame(&text).unwrap()
    else {
        panic!("not a CALLERROR: {text}")
    };
    assert_eq!(message_id, id);
    assert_eq!(code, "OccurenceConstraintViolation");
    assert_eq!(d, description);
    assert_eq!(details.get(), "{}");
    assert!(text.contains(r#"\u0001\u001f\n\r\t\b\f"#), "{text}");

    let text = call(id, "Data\"Transfer", r#"{"vendorId":"x"}"#);
    let Frame::Call {
        message_id,
        action,
        payload,
    } = parse_frame(&text).unwrap()
    else {
        panic!("not a CALL: {text}")
    };
    assert_eq!(
        (&*message_id, &*action, payload.get()),
        (id, "Data\"Transfer", r#"{"vendorId":"x"}"#)
    );

    let text = call_result(id, r#"{"status":"Accepted"}"#);
    let Frame::CallResult {
        message_id,
        payload,
    } = parse_frame(&text).unwrap()
    else {
        panic!("not a CALLRESULT: {text}")
    };
    assert_eq!(
        (&*message_id, payload.get()),
        (id, r#"{"status":"Accepted"}"#)
    );
}

#[test]
fn write_json_str_matches_serde_json_for_every_ascii_character() {
    let all: String = (0u8..128).map(char::from).collect();
    let mut mine = String::new();
    write_json_str(&mut mine, &all);
    let back: String = serde_json::from_str(&mine).unwrap();
    assert_eq!(back, all);
}

#[test]
fn frame_error_displays_code_and_description() {
    let e = error("[]");
    assert_eq!(e.to_string(), "ProtocolError: frame is an empty array");
}

#[test]
fn a_call_error_spells_its_code_as_the_sessions_version_does() {
    use crate::version::OcppVersion;
    let description = "idToken: required property is missing";
    assert_eq!(
        call_error_in(
            OcppVersion::V201,
            "7",
            ErrorCode::FormationViolation,
            description
        ),
        r#"[4,"7","FormatViolation","idToken: required property is missing",{}]"#
    );
    assert_eq!(
        call_error_in(
            OcppVersion::V16,
            "7",
            ErrorCode::FormationViolation,
            description
        ),
        call_error("7", ErrorCode::FormationViolation, description)
    );
    assert_eq!(
        call_error("7", ErrorCode::OccurenceConstraintViolation, "x"),
        r#"[4,"7","OccurenceConstraintViolation","x",{}]"#
    );
    let in_201 = call_error_in(OcppVersion::V201, "8", ErrorCode::RpcFrameworkError, "");
    assert_eq!(in_201, r#"[4,"8","RpcFrameworkError","",{}]"#);
    let in_16 = call_error_in(OcppVersion::V16, "8", ErrorCode::RpcFrameworkError, "");
    assert_eq!(in_16, r#"[4,"8","GenericError","",{}]"#);
}

#[test]
fn a_broken_frame_is_named_as_each_version_names_it() {
    use crate::version::OcppVersion::{V16, V201};
    let cases = [
        (
            "not json",
            ErrorCode::FormationViolation,
            ErrorCode::RpcFrameworkError,
        ),
        (
            r#"{"a":1}"#,
            ErrorCode::FormationViolation,
            ErrorCode::RpcFrameworkError,
        ),
        (
            r#"[7,"1","Heartbeat",{}]"#,
            ErrorCode::ProtocolError,
            ErrorCode::MessageTypeNotSupported,
        ),
        (
            r#"[2,"1","Heartbeat"]"#,
            ErrorCode::ProtocolError,
            ErrorCode::RpcFrameworkError,
        ),
        (
            r#"[2,1,"Heartbeat",{}]"#,
            ErrorCode::ProtocolError,
            ErrorCode::RpcFrameworkError,
        ),
    ];
    for (text, in_16, in_201) in cases {
        let e = error(text);
        assert_eq!(e.code_in(V16), in_16, "{text}");
        assert_eq!(e.code_in(V201), in_201, "{text}");
    }
}
