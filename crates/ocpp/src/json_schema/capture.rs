//! The few values a caller keeps of a valid payload, named by their paths in a table (not by
//! code per message): the streaming validator fills them as it reads, and [`from_tree`] reads
//! the same from a parsed tree, so that both ways keep the same.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{Format, Node};
use crate::v16::timestamp::parse_timestamp;

/// A path into the payload: member names, `*` for every item of an array. A table holds at
/// most [`MAX_TARGETS`] paths; captured values land in the slot of the path's index.
pub(crate) type Target = &'static [&'static str];

/// At most this many paths per table.
pub(crate) const MAX_TARGETS: usize = 16;

/// "Every item" in a [`Target`].
pub(crate) const EVERY_ITEM: &str = "*";

/// One value kept, as its schema node reads it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Captured<'de, 's> {
    /// A string without enumeration or format; borrowed unless it held escapes.
    Str(Cow<'de, str>),
    /// An enumerated string: the schema's own spelling of it.
    Enum(&'s str),
    /// A `date-time` string. Several (through `*`): the newest.
    Time(DateTime<Utc>),
    Int(i64),
    Bool(bool),
}

/// The values of a table's paths, by index; `None` where the payload has none.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Captures<'de, 's>([Option<Captured<'de, 's>>; MAX_TARGETS]);

impl<'de, 's> Captures<'de, 's> {
    pub(crate) fn get(&self, slot: usize) -> Option<&Captured<'de, 's>> {
        self.0.get(slot)?.as_ref()
    }

    pub(crate) fn take(&mut self, slot: usize) -> Option<Captured<'de, 's>> {
        self.0.get_mut(slot)?.take()
    }

    /// Keeps `value` for `slot`: the newest of several times, else the first value.
    pub(crate) fn keep(&mut self, slot: usize, value: Captured<'de, 's>) {
        let Some(kept) = self.0.get_mut(slot) else {
            return;
        };
        match (kept.as_mut(), value) {
            (None, value) => *kept = Some(value),
            (Some(Captured::Time(old)), Captured::Time(new)) => *old = (*old).max(new),
            (Some(_), _) => {}
        }
    }
}

/// The value a leaf `node` gives `value` (already validated against it), if it is a leaf.
pub(crate) fn leaf<'de, 's>(node: &'s Node, value: &Value) -> Option<Captured<'de, 's>> {
    match (node, value) {
        (Node::String(rules), Value::String(text)) => string(rules, Cow::Owned(text.clone())),
        (Node::Integer(_), Value::Number(n)) => n.as_i64().map(Captured::Int),
        (Node::Boolean, Value::Bool(b)) => Some(Captured::Bool(*b)),
        _ => None,
    }
}

/// A string's captured value by its rules: its enumeration's spelling, its time, or itself.
pub(crate) fn string<'de, 's>(
    rules: &'s super::StringRules,
    text: Cow<'de, str>,
) -> Option<Captured<'de, 's>> {
    if let Some(one_of) = &rules.one_of {
        return one_of
            .iter()
            .find(|allowed| **allowed == *text)
            .map(|allowed| Captured::Enum(allowed.as_str()));
    }
    match rules.format {
        Some(Format::DateTime) => parse_timestamp(&text).map(Captured::Time),
        _ => Some(Captured::Str(text)),
    }
}

/// The values at `targets` in a payload tree that `root` accepted.
pub(crate) fn from_tree<'s>(
    root: &'s Node,
    payload: &Value,
    targets: &[Target],
) -> Captures<'static, 's> {
    let mut captures = Captures::default();
    for (slot, target) in targets.iter().enumerate().take(MAX_TARGETS) {
        walk(root, payload, target, slot, &mut captures);
    }
    captures
}

fn walk<'s>(
    node: &'s Node,
    value: &Value,
    rest: &[&str],
    slot: usize,
    captures: &mut Captures<'static, 's>,
) {
    let Some((step, rest)) = rest.split_first() else {
        if let Some(found) = leaf(node, value) {
            captures.keep(slot, found);
        }
        return;
    };
    match (node, value) {
        (Node::Object { properties, .. }, Value::Object(members)) => {
            let property = properties.iter().find(|p| p.name == *step);
            if let (Some(property), Some(member)) = (property, members.get(*step)) {
                walk(&property.node, member, rest, slot, captures);
            }
        }
        (Node::Array { items, .. }, Value::Array(values)) if *step == EVERY_ITEM => {
            for value in values {
                walk(items, value, rest, slot, captures);
            }
        }
        _ => {}
    }
}
