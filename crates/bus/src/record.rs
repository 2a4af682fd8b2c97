//! Records as they travel on the bus.

use bytes::Bytes;
use smallvec::SmallVec;
use std::borrow::Cow;

/// A record header: a name and raw bytes, as Kafka has them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub name: Cow<'static, str>,
    pub value: Bytes,
}

impl Header {
    pub fn new(name: &'static str, value: impl Into<Bytes>) -> Self {
        Header {
            name: Cow::Borrowed(name),
            value: value.into(),
        }
    }
}

/// A record's headers. Up to ten live inside the record itself (a 1.6 MeterValues record has
/// eight, a 2.0.1 TransactionEvent with readings ten: the gateway's largest common ones), so a
/// frame's record is built without a heap allocation; more spill to the heap.
pub type Headers = SmallVec<[Header; 10]>;

/// One record: the key decides the partition (so one charger's records keep their order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub topic: Cow<'static, str>,
    pub key: Bytes,
    pub headers: Headers,
    pub value: Bytes,
}

impl Record {
    /// The value of the first header with this name.
    pub fn header(&self, name: &str) -> Option<&Bytes> {
        self.headers
            .iter()
            .find(|h| h.name == name)
            .map(|h| &h.value)
    }

    /// The header as UTF-8 text, if present and valid.
    pub fn header_str(&self, name: &str) -> Option<&str> {
        self.header(name).and_then(|v| std::str::from_utf8(v).ok())
    }
}

/// Where a published record landed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivered {
    pub partition: i32,
    pub offset: i64,
}

/// A consumed record with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub record: Record,
    pub partition: i32,
    pub offset: i64,
}
