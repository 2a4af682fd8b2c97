//! Compiling a schema's JSON into the [`Node`] tree the validator walks, refusing every
//! keyword it does not implement.

use std::fmt;

use serde_json::{Map, Value};

use super::{Format, Node, Property, StringRules};

/// A schema the validator cannot check faithfully: the place in the schema and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct UnsupportedSchema {
    /// A JSON pointer into the schema, `#` for its root.
    pub(crate) at: String,
    pub(crate) problem: String,
}

impl fmt::Display for UnsupportedSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.problem)
    }
}

impl std::error::Error for UnsupportedSchema {}

/// Keywords every schema may hold: `type` itself, and annotations that say nothing about the
/// payload.
const EVERY_TYPE: [&str; 4] = ["type", "$schema", "id", "title"];

pub(crate) fn compile(schema: &Value) -> Result<Node, UnsupportedSchema> {
    compile_at(schema, "#")
}

fn compile_at(schema: &Value, at: &str) -> Result<Node, UnsupportedSchema> {
    let unsupported = |problem: String| UnsupportedSchema {
        at: at.to_owned(),
        problem,
    };
    let Value::Object(keywords) = schema else {
        return Err(unsupported("a schema must be an object".into()));
    };
    let Some(Value::String(kind)) = keywords.get("type") else {
        return Err(unsupported("`type` must name exactly one type".into()));
    };
    let kind = kind.as_str();
    let own: &[&str] = match kind {
        "object" => &["properties", "required", "additionalProperties"],
        "array" => &["items", "minItems"],
        "string" => &["enum", "maxLength", "format"],
        "number" => &["multipleOf"],
        "integer" | "boolean" => &[],
        other => return Err(unsupported(format!("type {other:?} is not implemented"))),
    };
    for (keyword, value) in keywords {
        let known = EVERY_TYPE.contains(&keyword.as_str()) || own.contains(&keyword.as_str());
        // The official schemas also put `additionalProperties: false` on enumerations, where
        // it means nothing: JSON Schema applies it to objects only.
        let inert = keyword == "additionalProperties" && *value == Value::Bool(false);
        if !known && !inert {
            let problem = format!("keyword `{keyword}` is not implemented for type {kind}");
            return Err(unsupported(problem));
        }
    }
    let count = |keyword: &str| match keywords.get(keyword) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .map(Some)
            .ok_or_else(|| unsupported(format!("`{keyword}` must be a non-negative integer"))),
    };
    Ok(match kind {
        "object" => compile_object(keywords, at)?,
        "array" => {
            let Some(items) = keywords.get("items") else {
                return Err(unsupported("an array needs one `items` schema".into()));
            };
            Node::Array {
                items: Box::new(compile_at(items, &format!("{at}/items"))?),
                min_items: count("minItems")?.unwrap_or(0),
            }
        }
        "string" => Node::String(StringRules {
            max_len: count("maxLength")?,
            one_of: match keywords.get("enum") {
                None => None,
                Some(Value::Array(values)) => Some(
                    values
                        .iter()
                        .map(|v| v.as_str().map(str::to_owned))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| unsupported("`enum` must list strings".into()))?,
                ),
                Some(_) => return Err(unsupported("`enum` must be an array".into())),
            },
            format: match keywords.get("format") {
                None => None,
                Some(f) if *f == "date-time" => Some(Format::DateTime),
                Some(f) if *f == "uri" => Some(Format::Uri),
                Some(other) => {
                    return Err(unsupported(format!("format {other} is not implemented")));
                }
            },
        }),
        "number" => Node::Number {
            multiple_of: match keywords.get("multipleOf") {
                None => None,
                Some(m) => Some(
                    m.as_f64()
                        .filter(|m| *m > 0.0)
                        .ok_or_else(|| unsupported("`multipleOf` must be above 0".into()))?,
                ),
            },
        },
        "integer" => Node::Integer,
        _ => Node::Boolean,
    })
}

fn compile_object(keywords: &Map<String, Value>, at: &str) -> Result<Node, UnsupportedSchema> {
    let unsupported = |problem: &str| UnsupportedSchema {
        at: at.to_owned(),
        problem: problem.to_owned(),
    };
    let closed = match keywords.get("additionalProperties") {
        None => false,
        Some(Value::Bool(false)) => true,
        Some(_) => return Err(unsupported("`additionalProperties` must be false")),
    };
    let mut properties = Vec::new();
    match keywords.get("properties") {
        None => {}
        Some(Value::Object(members)) => {
            for (name, schema) in members {
                properties.push(Property {
                    name: name.clone(),
                    required: false,
                    node: compile_at(schema, &format!("{at}/properties/{name}"))?,
                });
            }
        }
        Some(_) => return Err(unsupported("`properties` must be an object")),
    }
    match keywords.get("required") {
        None => {}
        Some(Value::Array(names)) => {
            for name in names {
                // A required name without its own schema could hold anything: not supported,
                // so every required field is also checked.
                let property = name
                    .as_str()
                    .and_then(|name| properties.iter_mut().find(|p| p.name == name))
                    .ok_or_else(|| unsupported("`required` must name listed properties"))?;
                property.required = true;
            }
        }
        Some(_) => return Err(unsupported("`required` must be an array")),
    }
    Ok(Node::Object { properties, closed })
}
