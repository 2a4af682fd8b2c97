//! One session's last frames both ways, for `GET .../messages`: the bytes of each frame copied
//! into a circular byte buffer of its own (bounded in bytes, grown as the frames come, never
//! past its bound) beside an index of at most `frames` entries. A frame costs the session a
//! copy of its bytes (at most [`FRAME_CUT`]) and an index entry under an uncontended lock: no
//! allocation once the buffer has grown, no JSON. Frames cut from the shard's chunks are not
//! held, which would keep whole chunks alive.

use chrono::{DateTime, Utc};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Instant;

/// A frame longer than this is kept cut, with its whole length.
pub const FRAME_CUT: usize = 4 * 1024;

/// A frame as kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptFrame {
    pub at: DateTime<Utc>,
    /// From the charger (`true`) or to it.
    pub incoming: bool,
    /// Its first [`FRAME_CUT`] bytes at most.
    pub bytes: Vec<u8>,
    /// Its length before the cut.
    pub len: usize,
}

pub struct FrameRing {
    ring: Mutex<Ring>,
    /// Wall time of an instant, to tell when each frame came from its `Instant`.
    anchor: (Instant, DateTime<Utc>),
}

struct Ring {
    bytes: Vec<u8>,
    /// Bytes written since the start (a position in `bytes` modulo `max_bytes`).
    written: u64,
    entries: VecDeque<Entry>,
    max_frames: usize,
    max_bytes: usize,
}

/// 24 bytes: 200 of them are 4.7 KiB a charger.
struct Entry {
    start: u64,
    /// Microseconds from the ring's anchor.
    at: u64,
    len: u32,
    kept: u16,
    incoming: bool,
}

impl FrameRing {
    /// A ring of at most `max_frames` frames and `max_bytes` bytes; nothing is allocated yet.
    pub fn new(max_frames: usize, max_bytes: usize) -> FrameRing {
        FrameRing {
            ring: Mutex::new(Ring {
                bytes: Vec::new(),
                written: 0,
                entries: VecDeque::new(),
                max_frames,
                max_bytes: max_bytes.max(FRAME_CUT),
            }),
            anchor: (Instant::now(), Utc::now()),
        }
    }

    /// Keeps `frame`, received (`incoming`) or sent at `at`, in place of the oldest.
    pub fn push(&self, frame: &[u8], incoming: bool, at: Instant) {
        let at = at.saturating_duration_since(self.anchor.0).as_micros() as u64;
        let mut ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        ring.push(frame, incoming, at);
    }

    /// The frames kept, newest first.
    pub fn frames(&self) -> Vec<KeptFrame> {
        let ring = self.ring.lock().unwrap_or_else(|e| e.into_inner());
        let wall = self.anchor.1;
        ring.entries
            .iter()
            .rev()
            .map(|entry| {
                let since = chrono::Duration::microseconds(entry.at as i64);
                KeptFrame {
                    at: wall + since,
                    incoming: entry.incoming,
                    bytes: ring.read(entry),
                    len: entry.len as usize,
                }
            })
            .collect()
    }
}

impl Ring {
    fn push(&mut self, frame: &[u8], incoming: bool, at: u64) {
        if self.max_frames == 0 {
            return;
        }
        let kept = &frame[..frame.len().min(FRAME_CUT)];
        let start = self.written;
        self.write(kept);
        while self.entries.len() >= self.max_frames {
            self.entries.pop_front();
        }
        // Entries whose bytes were written over are gone.
        let oldest = self.written.saturating_sub(self.max_bytes as u64);
        while self.entries.front().is_some_and(|e| e.start < oldest) {
            self.entries.pop_front();
        }
        self.entries.push_back(Entry {
            start,
            kept: kept.len() as u16,
            len: u32::try_from(frame.len()).unwrap_or(u32::MAX),
            at,
            incoming,
        });
    }

    fn write(&mut self, data: &[u8]) {
        let linear = self.bytes.len() as u64 == self.written;
        if linear && self.bytes.len() + data.len() <= self.max_bytes {
            // Still growing: appended, doubling as a `Vec` does but never past the bound.
            let needed = self.bytes.len() + data.len();
            if needed > self.bytes.capacity() {
                let room = needed.max(self.bytes.capacity() * 2).min(self.max_bytes);
                self.bytes.reserve_exact(room - self.bytes.len());
            }
            self.bytes.extend_from_slice(data);
        } else {
            self.bytes.resize(self.max_bytes, 0);
            let at = (self.written % self.max_bytes as u64) as usize;
            let first = data.len().min(self.max_bytes - at);
            self.bytes[at..at + first].copy_from_slice(&data[..first]);
            self.bytes[..data.len() - first].copy_from_slice(&data[first..]);
        }
        self.written += data.len() as u64;
    }

    fn read(&self, entry: &Entry) -> Vec<u8> {
        let len = entry.kept as usize;
        if self.bytes.len() < self.max_bytes {
            let at = entry.start as usize;
            return self.bytes[at..at + len].to_vec();
        }
        let at = (entry.start % self.max_bytes as u64) as usize;
        let first = len.min(self.max_bytes - at);
        let mut out = Vec::with_capacity(len);
        out.extend_from_slice(&self.bytes[at..at + first]);
        out.extend_from_slice(&self.bytes[..len - first]);
        out
    }
}

#[cfg(test)]
mod tests;
