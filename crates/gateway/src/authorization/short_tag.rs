//! An id tag held inline: OCPP 1.6 limits idTag and parentIdTag to 20 characters (CiString20),
//! so a million tags cost no heap allocation each.

/// At most 20 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShortTag {
    len: u8,
    bytes: [u8; 20],
}

impl ShortTag {
    pub const EMPTY: ShortTag = ShortTag {
        len: 0,
        bytes: [0; 20],
    };

    /// `text` as it is; `None` when longer than 20 bytes.
    pub fn new(text: &str) -> Option<ShortTag> {
        let mut bytes = [0; 20];
        bytes
            .get_mut(..text.len())?
            .copy_from_slice(text.as_bytes());
        Some(ShortTag {
            len: text.len() as u8,
            bytes,
        })
    }

    /// `text` in ASCII uppercase: the key tags are compared by, as chargers compare them.
    pub fn upper(text: &str) -> Option<ShortTag> {
        let mut tag = ShortTag::new(text)?;
        tag.bytes.make_ascii_uppercase();
        Some(tag)
    }

    pub fn as_str(&self) -> &str {
        // Built only from a &str, cut at its end, and uppercased in ASCII: still UTF-8.
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl std::fmt::Debug for ShortTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_compare_case_insensitively_and_at_most_20_bytes() {
        assert_eq!(ShortTag::upper("abc-1"), ShortTag::upper("ABC-1"));
        assert_eq!(ShortTag::upper("abc-1").unwrap().as_str(), "ABC-1");
        assert_eq!(ShortTag::new("abc-1").unwrap().as_str(), "abc-1");
        assert!(ShortTag::new(&"x".repeat(20)).is_some());
        assert!(ShortTag::new(&"x".repeat(21)).is_none());
        assert_eq!(ShortTag::new("").unwrap(), ShortTag::EMPTY);
    }
}
