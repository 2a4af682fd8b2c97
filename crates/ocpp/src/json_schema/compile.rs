//! Compiling a schema's JSON into the [`Node`] tree the validator walks, refusing every
//! keyword it does not implement.
//!
//! Two dialects: the draft-04 keywords of the OCPP 1.6 files, and the draft-06 ones the OCPP
//! 2.0.1 files add (`$ref` to `#/definitions/...`, `maxItems`, `minimum`, `maximum`, an inert
//! `additionalItems`, and annotations). A `$ref` is resolved here: each definition is compiled
//! once and shared (`Arc`) by every place that refers to it.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Bounds, Format, Node, Property, StringRules};

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

/// Which keywords a schema may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    /// The OCPP 1.6 files (draft-04).
    Draft04,
    /// The OCPP 2.0.1 files (draft-06): draft-04's keywords and those the 2.0.1 files add.
    Draft06,
}

/// Keywords every draft-04 schema may hold: `type` itself, and annotations that say nothing
/// about the payload.
const EVERY_TYPE: [&str; 4] = ["type", "$schema", "id", "title"];

/// The same for draft-06, with the annotations the OCA's generator writes (`comment` and
/// `javaType` are its own; JSON Schema ignores unknown keywords, and so may cms for these).
const EVERY_TYPE_DRAFT06: [&str; 8] = [
    "type",
    "$schema",
    "$id",
    "title",
    "description",
    "comment",
    "javaType",
    "default",
];

/// Compiles an OCPP 1.6 (draft-04) schema.
pub(crate) fn compile(schema: &Value) -> Result<Node, UnsupportedSchema> {
    Compiler::new(schema, Dialect::Draft04).root(schema)
}

/// Compiles an OCPP 2.0.1 (draft-06) schema, its `$ref`s resolved.
pub(crate) fn compile_draft06(schema: &Value) -> Result<Node, UnsupportedSchema> {
    Compiler::new(schema, Dialect::Draft06).root(schema)
}

struct Compiler<'s> {
    dialect: Dialect,
    /// The root's `definitions` (draft-06 only).
    definitions: Option<&'s Map<String, Value>>,
    /// Every definition compiled so far, by name.
    compiled: HashMap<&'s str, Arc<Node>>,
    /// The definitions being compiled, outermost first: one met again refers to itself.
    resolving: Vec<&'s str>,
}

impl<'s> Compiler<'s> {
    fn new(schema: &'s Value, dialect: Dialect) -> Compiler<'s> {
        let definitions = match (dialect, schema.get("definitions")) {
            (Dialect::Draft06, Some(Value::Object(definitions))) => Some(definitions),
            _ => None,
        };
        Compiler {
            dialect,
            definitions,
            compiled: HashMap::new(),
            resolving: Vec::new(),
        }
    }

    fn root(mut self, schema: &'s Value) -> Result<Node, UnsupportedSchema> {
        let node = self.node(schema, "#")?;
        // Every definition is compiled, used or not, so that none hides a keyword the
        // validator does not implement.
        if let Some(definitions) = self.definitions {
            for name in definitions.keys() {
                self.definition(name, "#")?;
            }
        }
        Ok(node)
    }

    /// A schema in a property or an array's items: a `$ref` is shared, anything else its own.
    fn child(&mut self, schema: &'s Value, at: &str) -> Result<Arc<Node>, UnsupportedSchema> {
        match schema.get("$ref") {
            Some(reference) if self.dialect == Dialect::Draft06 => {
                self.reference(schema, reference, at)
            }
            _ => self.node(schema, at).map(Arc::new),
        }
    }

    fn reference(
        &mut self,
        schema: &'s Value,
        reference: &'s Value,
        at: &str,
    ) -> Result<Arc<Node>, UnsupportedSchema> {
        let unsupported = |problem: String| UnsupportedSchema {
            at: at.to_owned(),
            problem,
        };
        if schema
            .as_object()
            .is_some_and(|keywords| keywords.len() > 1)
        {
            return Err(unsupported(
                "keywords beside `$ref` are not implemented".into(),
            ));
        }
        let name = reference
            .as_str()
            .and_then(|r| r.strip_prefix("#/definitions/"))
            .ok_or_else(|| unsupported(format!("`$ref` {reference} is not implemented")))?;
        self.definition(name, at)
    }

    /// The compiled definition `name`, compiled on first use.
    fn definition(&mut self, name: &str, at: &str) -> Result<Arc<Node>, UnsupportedSchema> {
        let unsupported = |problem: String| UnsupportedSchema {
            at: at.to_owned(),
            problem,
        };
        let Some((name, schema)) = self.definitions.and_then(|d| d.get_key_value(name)) else {
            return Err(unsupported(format!("no definition {name:?}")));
        };
        if let Some(node) = self.compiled.get(name.as_str()) {
            return Ok(Arc::clone(node));
        }
        if self.resolving.contains(&name.as_str()) {
            return Err(unsupported(format!("definition {name:?} refers to itself")));
        }
        self.resolving.push(name);
        let node = self.node(schema, &format!("#/definitions/{name}"));
        self.resolving.pop();
        let node = Arc::new(node?);
        self.compiled.insert(name, Arc::clone(&node));
        Ok(node)
    }

    fn node(&mut self, schema: &'s Value, at: &str) -> Result<Node, UnsupportedSchema> {
        let unsupported = |problem: String| UnsupportedSchema {
            at: at.to_owned(),
            problem,
        };
        let Value::Object(keywords) = schema else {
            return Err(unsupported("a schema must be an object".into()));
        };
        let draft06 = self.dialect == Dialect::Draft06;
        // Only annotations, no `type`: any value (DataTransfer's `data` in 2.0.1).
        let annotation = |k: &String| k != "type" && EVERY_TYPE_DRAFT06.contains(&k.as_str());
        if draft06 && keywords.keys().all(annotation) {
            return Ok(Node::Any);
        }
        let Some(Value::String(kind)) = keywords.get("type") else {
            return Err(unsupported("`type` must name exactly one type".into()));
        };
        let kind = kind.as_str();
        let own: &[&str] = match (kind, draft06) {
            ("object", _) => &["properties", "required", "additionalProperties"],
            ("array", false) => &["items", "minItems"],
            ("array", true) => &["items", "minItems", "maxItems", "additionalItems"],
            ("string", _) => &["enum", "maxLength", "format"],
            ("number", false) => &["multipleOf"],
            ("number", true) => &["multipleOf", "minimum", "maximum"],
            ("integer", true) => &["minimum", "maximum"],
            ("integer" | "boolean", _) => &[],
            (other, _) => return Err(unsupported(format!("type {other:?} is not implemented"))),
        };
        let every_type: &[&str] = if draft06 {
            &EVERY_TYPE_DRAFT06
        } else {
            &EVERY_TYPE
        };
        for (keyword, value) in keywords {
            let known = every_type.contains(&keyword.as_str()) || own.contains(&keyword.as_str());
            // The official schemas also put `additionalProperties: false` on enumerations, where
            // it means nothing: JSON Schema applies it to objects only.
            let inert = keyword == "additionalProperties" && *value == Value::Bool(false);
            // `definitions` are read where a `$ref` points (the root's only).
            let definitions = draft06 && keyword == "definitions" && at == "#";
            if !known && !inert && !definitions {
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
        let bound = |keyword: &str| match keywords.get(keyword) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .map(Some)
                .ok_or_else(|| unsupported(format!("`{keyword}` must be a number"))),
        };
        Ok(match kind {
            "object" => self.object(keywords, at)?,
            "array" => {
                let Some(items) = keywords.get("items") else {
                    return Err(unsupported("an array needs one `items` schema".into()));
                };
                // Beside one `items` schema (not a list), `additionalItems` means nothing.
                if keywords
                    .get("additionalItems")
                    .is_some_and(|a| *a != Value::Bool(false))
                {
                    return Err(unsupported("`additionalItems` must be false".into()));
                }
                Node::Array {
                    items: self.child(items, &format!("{at}/items"))?,
                    min_items: count("minItems")?.unwrap_or(0),
                    max_items: count("maxItems")?,
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
                bounds: Bounds {
                    minimum: bound("minimum")?,
                    maximum: bound("maximum")?,
                },
            },
            "integer" => Node::Integer(Bounds {
                minimum: bound("minimum")?,
                maximum: bound("maximum")?,
            }),
            _ => Node::Boolean,
        })
    }

    fn object(
        &mut self,
        keywords: &'s Map<String, Value>,
        at: &str,
    ) -> Result<Node, UnsupportedSchema> {
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
                        node: self.child(schema, &format!("{at}/properties/{name}"))?,
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
}
