use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::*;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/v201")
}

fn vendored_files() -> impl Iterator<Item = (String, &'static str)> {
    VENDORED.iter().flat_map(|&(action, request, response)| {
        [
            (format!("{action}Request.json"), request),
            (format!("{action}Response.json"), response),
        ]
    })
}

#[test]
fn every_embedded_schema_is_the_vendored_file_byte_for_byte() {
    for (file, embedded) in vendored_files() {
        let on_disk = std::fs::read(folder().join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(
            on_disk == embedded.as_bytes(),
            "{file} differs from its embedded text"
        );
    }
}

#[test]
fn every_file_in_the_schema_folder_is_embedded_and_nothing_else() {
    let on_disk: BTreeSet<String> = std::fs::read_dir(folder())
        .expect("schemas/v201 exists")
        .map(|entry| entry.expect("readable").file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".json"))
        .collect();
    let embedded: BTreeSet<String> = vendored_files().map(|(file, _)| file).collect();
    assert_eq!(on_disk, embedded);
    // All of OCPP 2.0.1: 64 actions, a request and a response schema each.
    assert_eq!(VENDORED.len(), 64);
    assert!(
        folder().join("LICENSE.md").is_file(),
        "the licence travels with the files"
    );
}
