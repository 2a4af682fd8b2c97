use super::*;

fn frame(text: &str, direction: &str) -> SentFrame {
    SentFrame {
        at: "2026-11-21T10:00:00.000000Z".into(),
        direction: direction.into(),
        frame: text.into(),
        len: text.len(),
    }
}

fn answer(frames: Vec<SentFrame>) -> FramesAnswer {
    FramesAnswer {
        request: "5d0c2b6e-9a41-4f7e-8c1a-2b7e3f4a5c61".into(),
        identity: "CP-1".into(),
        gateway: "gw-1".into(),
        live: true,
        frames,
    }
}

#[test]
fn a_request_goes_to_the_gateways_keyed_by_charger_and_is_no_action() {
    let topics = Topics::with_prefix("t");
    let request = FramesRequest {
        request: "5d0c2b6e-9a41-4f7e-8c1a-2b7e3f4a5c61".into(),
        identity: "CP-1".into(),
        asked_at: "2026-11-21T10:00:00.000000Z".into(),
    };
    let record = frames_request_record(&topics, &request);
    assert_eq!(record.topic, "t.ocpp.commands");
    assert_eq!(&record.key[..], b"CP-1");
    assert_eq!(record.header_str("kind"), Some("frames_request"));
    assert_eq!(FramesRequest::of(&record), Some(request));
    let message = crate::Message {
        record: record.clone(),
        partition: 0,
        offset: 0,
    };
    assert_eq!(crate::command_of(&message), None, "no gateway sends it");
    assert_eq!(FramesAnswer::of(&record), None);
}

#[test]
fn an_answer_comes_back_on_the_results_with_the_request_id_and_is_no_report() {
    let topics = Topics::with_prefix("t");
    let sent = answer(vec![
        frame(r#"[3,"b1",{"status":"Accepted"}]"#, "out"),
        frame(r#"[2,"b1","BootNotification",{}]"#, "in"),
    ]);
    let record = frames_answer_record(&topics, &sent);
    assert_eq!(record.topic, "t.ocpp.command-results");
    assert_eq!(&record.key[..], b"CP-1");
    assert_eq!(record.header_str("kind"), Some("frames"));
    assert_eq!(FramesAnswer::of(&record), Some(sent));
    let message = crate::Message {
        record: record.clone(),
        partition: 0,
        offset: 0,
    };
    assert_eq!(crate::report_of(&message), None, "no action's report");
    assert_eq!(FramesRequest::of(&record), None);
}

#[test]
fn an_answer_past_its_bound_leaves_the_oldest_frames_out() {
    // Quotes JSON escapes: each 4 KiB frame of them weighs 8 KiB in the answer.
    let heavy = "\"".repeat(4096);
    let frames: Vec<SentFrame> = (0..64).map(|_| frame(&heavy, "in")).collect();
    let mut sent = answer(frames);
    sent.frames[0].frame = "newest".into();
    let record = frames_answer_record(&topics_t(), &sent);
    assert!(
        record.value.len() <= MAX_ANSWER_BYTES,
        "{}",
        record.value.len()
    );
    let read = FramesAnswer::of(&record).unwrap();
    assert!(
        read.frames.len() < 64 && read.frames.len() > 20,
        "{}",
        read.frames.len()
    );
    assert_eq!(read.frames[0].frame, "newest", "the newest are kept");
}

fn topics_t() -> Topics {
    Topics::with_prefix("t")
}
