//! The REST request readers (`cms_api::fuzzing::read_body`): a body through `Input::from_json`
//! and one endpoint's field rules (id tags, sites, charger settings, proxy servers, the
//! transactions filter as body or query string, an action's payload, OAuth token parameters).
//! The first byte picks the endpoint.
#![no_main]

use cms_api::ApiError;
use cms_api::fuzzing::read_body;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&reader, body)) = data.split_first() else {
        return;
    };
    // A reader answers 400 (not a JSON object) or 422 (fields refused), never anything else:
    // a 500 for bad input would be a bug even without a panic.
    match read_body(reader, body) {
        Ok(()) | Err(ApiError::BadRequest(_)) | Err(ApiError::Validation(_)) => {}
        Err(other) => panic!("{other:?} for {:?}", String::from_utf8_lossy(body)),
    }
});
