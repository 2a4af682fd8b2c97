//! REST input parsing, through the one public door to it: `Input::from_json` and the `Input`
//! rules live in cms-api's private `http` module, so this fuzzes `id_tag_from_record` (a
//! record of named text fields run through `Input` and the id-tag rules, as `cms id-tag
//! import` and the API do) and `is_id_tag`. The input is `name=value` lines.
#![no_main]

use cms_api::{id_tag_from_record, is_id_tag};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let record: Vec<(String, String)> = text
        .split('\n')
        .map(|line| match line.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (line.to_string(), String::new()),
        })
        .collect();
    let _ = id_tag_from_record(record);
    for line in text.split('\n') {
        let _ = is_id_tag(line);
    }
});
