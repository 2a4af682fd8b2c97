//! The validator in one streaming pass: a serde seed over a compiled [`Node`] reads the JSON
//! text with serde_json, checks each value against its node as it reads it, and keeps the
//! values of a capture table — no tree, and nothing allocated for a valid payload without
//! escapes. It never names a violation: at the first thing it would refuse, or anything
//! unusual (a repeated member), it gives up, and the caller asks the tree validator, whose
//! first violation is then the answer. So the two never disagree on what they accept.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::capture::{self, Captured, Captures, EVERY_ITEM, MAX_TARGETS, Target};
use super::{Node, Times, is_multiple, string_problem};
use crate::json::Key;

/// The captures of `payload` if `root` accepts it, `None` if the tree validator must decide.
pub(crate) fn check<'de, 's>(
    root: &'s Node,
    payload: &'de str,
    targets: &'s [Target],
) -> Option<Captures<'de, 's>> {
    if targets.len() > MAX_TARGETS {
        return None;
    }
    let mut kept = Kept {
        targets,
        captures: Captures::default(),
    };
    let mut de = serde_json::Deserializer::from_str(payload);
    let all = (1u32 << targets.len()) - 1;
    let seed = Seed {
        node: root,
        at: Cursor {
            depth: 0,
            live: all,
        },
        kept: &mut kept,
    };
    seed.deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(kept.captures)
}

/// The capture table and what was kept of it so far.
struct Kept<'de, 's> {
    targets: &'s [Target],
    captures: Captures<'de, 's>,
}

/// Where the reader is, as far as the table cares: the depth, and the paths still on course.
#[derive(Clone, Copy)]
struct Cursor {
    depth: usize,
    /// A bit per target whose path leads here.
    live: u32,
}

impl Cursor {
    /// The cursor one step down, into member `key` (or an item, [`EVERY_ITEM`]).
    fn enter(self, targets: &[Target], step: &str) -> Cursor {
        let mut live = 0;
        if self.live != 0 {
            for (i, target) in targets.iter().enumerate() {
                if self.live & (1 << i) != 0 && target.get(self.depth) == Some(&step) {
                    live |= 1 << i;
                }
            }
        }
        Cursor {
            depth: self.depth + 1,
            live,
        }
    }

    /// Keeps `value` for every target that ends here.
    fn keep<'de, 's>(
        self,
        kept: &mut Kept<'de, 's>,
        value: impl Fn() -> Option<Captured<'de, 's>>,
    ) {
        if self.live == 0 {
            return;
        }
        for (i, target) in kept.targets.iter().enumerate() {
            if self.live & (1 << i) != 0
                && target.len() == self.depth
                && let Some(found) = value()
            {
                kept.captures.keep(i, found);
            }
        }
    }
}

/// Why the reader gave up: never shown (the tree validator gives the reason).
#[derive(Debug)]
struct GiveUp;

impl fmt::Display for GiveUp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to the tree validator")
    }
}

fn give_up<E: de::Error, T>() -> Result<T, E> {
    Err(E::custom(GiveUp))
}

/// Reads one value against `node`.
struct Seed<'k, 'de, 's> {
    node: &'s Node,
    at: Cursor,
    kept: &'k mut Kept<'de, 's>,
}

impl<'de> DeserializeSeed<'de> for Seed<'_, 'de, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        // Each node asks for its own type: anything else (a null included) fails in serde_json.
        match self.node {
            Node::Object { .. } => d.deserialize_map(self),
            Node::Array { .. } => d.deserialize_seq(self),
            Node::String(_) => d.deserialize_str(self),
            // An integer is parsed in place, also with serde_json's `arbitrary_precision` on
            // (as in the `cms` binary), where "any" value would copy a number's text.
            Node::Integer(_) => d.deserialize_i64(self),
            Node::Number { .. } => d.deserialize_f64(self),
            Node::Boolean => d.deserialize_bool(self),
            Node::Any => d.deserialize_any(AnyValue),
        }
    }
}

impl<'de> Visitor<'de> for Seed<'_, 'de, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.node.type_name())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Node::Object { properties, closed } = self.node else {
            return give_up();
        };
        if properties.len() > 64 {
            return give_up();
        }
        // A bit per property read: a repeated one is left to the tree (which keeps the last).
        let mut seen = 0u64;
        while let Some(Key(key)) = map.next_key()? {
            match properties.iter().position(|p| p.name == *key) {
                Some(i) => {
                    if seen & (1 << i) != 0 {
                        return give_up();
                    }
                    seen |= 1 << i;
                    map.next_value_seed(Seed {
                        node: &properties[i].node,
                        at: self.at.enter(self.kept.targets, &key),
                        kept: &mut *self.kept,
                    })?;
                }
                None if *closed => return give_up(),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let missing = properties
            .iter()
            .enumerate()
            .any(|(i, p)| p.required && seen & (1 << i) == 0);
        if missing { give_up() } else { Ok(()) }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let Node::Array {
            items,
            min_items,
            max_items,
        } = self.node
        else {
            return give_up();
        };
        let at = self.at.enter(self.kept.targets, EVERY_ITEM);
        let mut count = 0;
        loop {
            let seed = Seed {
                node: items,
                at,
                kept: &mut *self.kept,
            };
            if seq.next_element_seed(seed)?.is_none() {
                break;
            }
            count += 1;
            if max_items.is_some_and(|max| count > max) {
                return give_up();
            }
        }
        if count < *min_items {
            give_up()
        } else {
            Ok(())
        }
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<(), E> {
        self.string(Cow::Borrowed(text))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        // A string that held escapes: copied only if it is kept.
        let Node::String(rules) = self.node else {
            return give_up();
        };
        if string_problem(rules, text, Times::OffsetOptional).is_some() {
            return give_up();
        }
        self.at.keep(self.kept, || {
            capture::string(rules, Cow::Owned(text.to_owned()))
        });
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<(), E> {
        match self.node {
            Node::Integer(bounds) => {
                let Ok(small) = i32::try_from(i) else {
                    return give_up();
                };
                if bounds.problem(f64::from(small), &small).is_some() {
                    return give_up();
                }
                self.at.keep(self.kept, || Some(Captured::Int(i)));
                Ok(())
            }
            // `i as f64` is what serde_json's tree makes of it too.
            _ => self.visit_f64(i as f64),
        }
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<(), E> {
        match (self.node, i64::try_from(u)) {
            (Node::Integer(_), Ok(i)) => self.visit_i64(i),
            (Node::Integer(_), Err(_)) => give_up(),
            _ => self.visit_f64(u as f64),
        }
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<(), E> {
        let Node::Number {
            multiple_of,
            bounds,
        } = self.node
        else {
            return give_up();
        };
        let off = multiple_of.is_some_and(|of| !is_multiple(x, of));
        if off || bounds.problem(x, &x).is_some() {
            return give_up();
        }
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<(), E> {
        match self.node {
            Node::Boolean => {
                self.at.keep(self.kept, || Some(Captured::Bool(b)));
                Ok(())
            }
            _ => give_up(),
        }
    }
}

impl<'de> Seed<'_, 'de, '_> {
    fn string<E: de::Error>(self, text: Cow<'de, str>) -> Result<(), E> {
        let Node::String(rules) = self.node else {
            return give_up();
        };
        if string_problem(rules, &text, Times::OffsetOptional).is_some() {
            return give_up();
        }
        self.at
            .keep(self.kept, || capture::string(rules, text.clone()));
        Ok(())
    }
}

/// Any JSON value, held to the NUL rule in its strings (a NUL can only come escaped).
struct AnyValue;

impl<'de> DeserializeSeed<'de> for AnyValue {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AnyValue {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        if text.contains('\0') {
            give_up()
        } else {
            Ok(())
        }
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(AnyValue)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // A repeated key is left to the tree, which keeps only the last value.
        while map.next_key::<IgnoredAny>()?.is_some() {
            map.next_value_seed(AnyValue)?;
        }
        Ok(())
    }
}
