use super::*;

fn texts(ring: &FrameRing) -> Vec<String> {
    ring.frames()
        .into_iter()
        .map(|f| String::from_utf8(f.bytes).unwrap())
        .collect()
}

#[test]
fn the_newest_frames_are_kept_newest_first_up_to_the_count() {
    let ring = FrameRing::new(3, 1024 * 1024);
    for i in 0..5 {
        ring.push(format!("frame {i}").as_bytes(), i % 2 == 0, Instant::now());
    }
    assert_eq!(texts(&ring), ["frame 4", "frame 3", "frame 2"]);
    let frames = ring.frames();
    assert!(frames[0].incoming && !frames[1].incoming);
    assert!(frames[0].at >= frames[1].at);
}

#[test]
fn frames_written_over_in_the_byte_bound_are_gone_and_the_rest_read_whole() {
    // 4 KiB of room: 1,500-byte frames, the third wraps round the end.
    let ring = FrameRing::new(200, FRAME_CUT);
    let frame = |c: u8| vec![c; 1_500];
    for c in [b'a', b'b', b'c', b'd'] {
        ring.push(&frame(c), true, Instant::now());
    }
    let kept = ring.frames();
    assert_eq!(kept.len(), 2, "only the last two fit in 4 KiB");
    assert_eq!(kept[0].bytes, frame(b'd'));
    assert_eq!(kept[1].bytes, frame(b'c'));
}

#[test]
fn a_long_frame_is_kept_cut_with_its_whole_length() {
    let ring = FrameRing::new(10, 64 * 1024);
    ring.push(&vec![b'x'; 10_000], false, Instant::now());
    let kept = ring.frames();
    assert_eq!((kept[0].bytes.len(), kept[0].len), (FRAME_CUT, 10_000));
}

#[test]
fn a_ring_of_no_frames_keeps_nothing() {
    let ring = FrameRing::new(0, 64 * 1024);
    ring.push(b"[2,\"1\",\"Heartbeat\",{}]", true, Instant::now());
    assert!(ring.frames().is_empty());
}

#[test]
fn an_index_entry_stays_small() {
    // Every connected charger holds up to 200 of them.
    assert_eq!(std::mem::size_of::<Entry>(), 24);
}

#[test]
fn the_buffer_never_grows_past_its_bound() {
    let ring = FrameRing::new(200, 64 * 1024);
    for _ in 0..300 {
        ring.push(&[b'x'; 700], true, Instant::now());
    }
    let inner = ring.ring.lock().unwrap();
    assert_eq!(inner.bytes.capacity(), 64 * 1024);
}
