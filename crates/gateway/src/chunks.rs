//! The byte strings made for every frame (the record's copy of the frame, its times, the
//! answer) are cut from a chunk the thread keeps, not allocated one by one: a shard asks the
//! allocator for one chunk per tens of frames instead of several buffers per frame. Each string
//! shares its chunk (`Bytes`), which is freed when the last string cut from it is: records live
//! until the bus took them, answers until the socket wrote them.

use bytes::{Bytes, BytesMut};
use std::cell::RefCell;
use std::fmt;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// Room for about sixty MeterValues frames with their answers and times (a chunk a shard's
/// allocator serves from its arena, below glibc's 128 KiB threshold for a mapping of its own).
const CHUNK: usize = 32 * 1024;

thread_local! {
    static CHUNK_LEFT: RefCell<BytesMut> = RefCell::new(BytesMut::new());
}

/// The bytes `write` writes (`room` of them at most, or the chunk grows by a copy) as shared
/// bytes cut from this thread's chunk.
pub fn bytes(room: usize, write: impl FnOnce(&mut BytesMut)) -> Bytes {
    CHUNK_LEFT.with_borrow_mut(|left| {
        // What is left of a chunk is its spare room: the written part was split off.
        if left.capacity() < room {
            *left = BytesMut::with_capacity(CHUNK.max(room));
        }
        write(left);
        left.split().freeze()
    })
}

/// [`bytes`] for text: `write` writes `str` pieces only.
pub fn text(room: usize, write: impl FnOnce(&mut BytesMut) -> fmt::Result) -> Utf8Bytes {
    // A `BytesMut` takes every `str` written (it grows), and `str` pieces make UTF-8: neither
    // can fail, and an empty text is the answer to the impossible.
    let bytes = bytes(room, |out| {
        let _ = write(out);
    });
    Utf8Bytes::try_from(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write;

    #[test]
    fn strings_cut_from_one_chunk_keep_their_own_bytes() {
        let first = text(16, |out| out.write_str("[3,\"a\",{}]"));
        let second = bytes(4, |out| out.extend_from_slice(b"2026"));
        assert_eq!(first.as_str(), "[3,\"a\",{}]");
        assert_eq!(&second[..], b"2026");
        // Past a chunk's room, a new chunk: earlier strings are unchanged.
        let big = bytes(CHUNK * 2, |out| out.resize(CHUNK * 2, b'x'));
        assert_eq!(big.len(), CHUNK * 2);
        let third = bytes(2, |out| out.extend_from_slice(b"ok"));
        assert_eq!(
            (first.as_str(), &second[..], &third[..]),
            ("[3,\"a\",{}]", &b"2026"[..], &b"ok"[..])
        );
    }
}
