use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

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

/// The keywords the validator implements for 2.0.1 (draft-06), and the formats it checks.
const IMPLEMENTED: [&str; 23] = [
    "$schema",
    "$id",
    "id",
    "title",
    "description",
    "comment",
    "javaType",
    "default",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "additionalItems",
    "minItems",
    "maxItems",
    "enum",
    "maxLength",
    "format",
    "multipleOf",
    "minimum",
    "maximum",
    "$ref",
];
const FORMATS: [&str; 2] = ["date-time", "uri"];

/// Every `(place, keyword)` of a schema the validator does not implement, walking every
/// nested schema and definition itself (not through `compile_draft06`, which the test also runs).
fn unimplemented(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Value::Object(keywords) = schema else {
        out.push(format!("{at}: not a schema object"));
        return;
    };
    for (keyword, value) in keywords {
        let definitions = keyword == "definitions" && at == "#";
        if !IMPLEMENTED.contains(&keyword.as_str()) && !definitions {
            out.push(format!("{at}: {keyword}"));
        }
        if keyword == "format" && !value.as_str().is_some_and(|f| FORMATS.contains(&f)) {
            out.push(format!("{at}: format {value}"));
        }
        if ["additionalProperties", "additionalItems"].contains(&keyword.as_str())
            && *value != Value::Bool(false)
        {
            out.push(format!("{at}: {keyword} {value}"));
        }
        if keyword == "$ref"
            && !value
                .as_str()
                .is_some_and(|r| r.starts_with("#/definitions/"))
        {
            out.push(format!("{at}: $ref {value}"));
        }
    }
    for nested in ["properties", "definitions"] {
        if let Some(Value::Object(members)) = keywords.get(nested) {
            for (name, member) in members {
                unimplemented(member, &format!("{at}/{nested}/{name}"), out);
            }
        }
    }
    if let Some(items) = keywords.get("items") {
        unimplemented(items, &format!("{at}/items"), out);
    }
}

#[test]
fn every_vendored_schema_uses_only_implemented_keywords() {
    for (file, text) in vendored_files() {
        let schema: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        let mut found = Vec::new();
        unimplemented(&schema, "#", &mut found);
        assert!(
            found.is_empty(),
            "{file} uses unimplemented keywords: {found:?}"
        );
        if let Err(e) = compile_draft06(&schema) {
            panic!("{file} does not compile: {e}");
        }
    }
}

#[test]
fn custom_data_stays_open_where_the_schema_leaves_it_open() {
    // CustomDataType has no `additionalProperties: false`: a vendor may add anything to it,
    // but not to the objects that hold it.
    let schemas = action_schemas("Heartbeat");
    let extended = serde_json::json!({"customData": {"vendorId": "com.example", "x": [1]}});
    schemas.request.validate(&extended).unwrap();
    let beside = serde_json::json!({"customData": {"vendorId": "com.example"}, "x": 1});
    let found = schemas.request.validate(&beside).unwrap_err();
    assert_eq!(found.first().field, "x");
    let missing = serde_json::json!({"customData": {}});
    let found = schemas.request.validate(&missing).unwrap_err();
    assert_eq!(found.first().field, "customData.vendorId");
}

#[test]
fn every_command_and_every_station_action_has_its_schemas() {
    use crate::v201::{Action, Command};
    let names = Command::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(Action::ALL.iter().map(|a| a.as_str()));
    for name in names {
        assert!(COMPILED.contains_key(name), "{name} has no vendored schema");
        assert!(crate::v201::is_known_action(name), "{name}");
    }
    assert!(crate::v201::is_known_action("SetDisplayMessage"));
    assert!(!crate::v201::is_known_action("StartTransaction"));
    assert!(!crate::v201::is_known_action("heartbeat"));
}
