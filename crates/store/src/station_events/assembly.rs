//! A 2.0.1 transaction assembled from its TransactionEvents, whatever order they arrive in.
//!
//! Each field keeps the event that set it with the rank that event has for that field (its
//! seqNo, whether it was the Started, whether a reading was the Transaction.Begin one): an
//! event arriving late replaces a field only if it outranks what set it. So applying events
//! in any order, or one twice (the bus delivers at least once), gives the row that applying
//! them once in seqNo order gives. The whole is kept as JSON in `transactions.assembly`.

use super::{ReadingContext, TransactionEvent};
use serde::{Deserialize, Serialize};

/// What a transaction's events have set so far, each field with the rank of what set it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Assembled {
    /// The EVSE, from the lowest seqNo that named one: (seqNo, evseId).
    evse: Option<(i64, i64)>,
    /// The idToken, from the lowest seqNo that carried one: (seqNo, idToken, answered status).
    id_tag: Option<(i64, String, Option<String>)>,
    /// (seqNo, reservationId), the lowest seqNo's.
    reservation: Option<(i64, i64)>,
    /// The start time: the Started event's timestamp, else the earliest: (not Started, time).
    started: Option<(bool, String)>,
    /// The energy register at the start (Wh): a Transaction.Begin reading, else the lowest
    /// seqNo's earliest: (not Begin, seqNo, Wh).
    start_wh: Option<(bool, i64, i64)>,
    /// The last energy register (Wh): a Transaction.End reading, else the highest seqNo's
    /// latest: (End, seqNo, Wh).
    last_wh: Option<(bool, i64, i64)>,
    /// The Ended event: (timestamp, stoppedReason).
    ended: Option<(String, String)>,
}

/// The transaction's columns as the assembled events give them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Columns<'a> {
    /// The EVSE (the reference's connector); 0 until an event names it.
    pub connector_id: i64,
    /// Empty until an event carries an idToken.
    pub id_tag: &'a str,
    pub id_tag_status: Option<&'a str>,
    pub reservation_id: Option<i64>,
    /// 0 until an event carries an energy register.
    pub meter_start: i64,
    /// Once Ended: the last energy register (the start's if none).
    pub meter_stop: Option<i64>,
    pub started_at: &'a str,
    pub stopped_at: Option<&'a str>,
    pub stop_reason: Option<&'a str>,
}

impl Assembled {
    /// Takes in `event`, field by field where it outranks what is held.
    pub fn add(&mut self, e: &TransactionEvent) {
        let seq = e.seq_no;
        if let Some(evse) = e.evse_id {
            keep_lowest(&mut self.evse, (seq, evse), |held| held.0);
        }
        if let Some(tag) = &e.id_tag {
            let new = (seq, tag.clone(), e.id_tag_status.clone());
            keep_lowest(&mut self.id_tag, new, |held| held.0);
        }
        if let Some(reservation) = e.reservation_id {
            keep_lowest(&mut self.reservation, (seq, reservation), |held| held.0);
        }
        let not_started = e.event_type != EventType::Started;
        keep_lowest(
            &mut self.started,
            (not_started, e.timestamp.clone()),
            |held| held.clone(),
        );
        // The event's own best candidates first: Begin (End) readings, else its earliest
        // (latest) one. Record times are fixed-width: text order is time order.
        let begin = e
            .energy
            .iter()
            .filter(|r| r.context == ReadingContext::Begin);
        let first = begin
            .min_by(|a, b| a.reading.at.cmp(&b.reading.at))
            .map(|r| (false, r))
            .or_else(|| {
                let earliest = e
                    .energy
                    .iter()
                    .min_by(|a, b| a.reading.at.cmp(&b.reading.at));
                earliest.map(|r| (true, r))
            });
        if let Some((not_begin, r)) = first {
            keep_lowest(&mut self.start_wh, (not_begin, seq, r.reading.wh), |h| {
                (h.0, h.1)
            });
        }
        let end = e.energy.iter().filter(|r| r.context == ReadingContext::End);
        let last = end
            .max_by(|a, b| a.reading.at.cmp(&b.reading.at))
            .map(|r| (true, r))
            .or_else(|| {
                let latest = e
                    .energy
                    .iter()
                    .max_by(|a, b| a.reading.at.cmp(&b.reading.at));
                latest.map(|r| (false, r))
            });
        if let Some((is_end, r)) = last {
            let new = (is_end, seq, r.reading.wh);
            if self.last_wh.is_none_or(|h| (h.0, h.1) < (new.0, new.1)) {
                self.last_wh = Some(new);
            }
        }
        if e.event_type == EventType::Ended && self.ended.is_none() {
            let reason = e.stopped_reason.clone().unwrap_or_else(|| "Local".into());
            self.ended = Some((e.timestamp.clone(), reason));
        }
    }

    pub fn columns(&self) -> Columns<'_> {
        let meter_start = self.start_wh.map_or(0, |(_, _, wh)| wh);
        Columns {
            connector_id: self.evse.map_or(0, |(_, evse)| evse),
            id_tag: self.id_tag.as_ref().map_or("", |(_, tag, _)| tag),
            id_tag_status: self.id_tag.as_ref().and_then(|(_, _, s)| s.as_deref()),
            reservation_id: self.reservation.map(|(_, id)| id),
            meter_start,
            meter_stop: self
                .ended
                .as_ref()
                .map(|_| self.last_wh.map_or(meter_start, |(_, _, wh)| wh)),
            started_at: self.started.as_ref().map_or("", |(_, at)| at),
            stopped_at: self.ended.as_ref().map(|(at, _)| at.as_str()),
            stop_reason: self.ended.as_ref().map(|(_, reason)| reason.as_str()),
        }
    }
}

/// Replaces `held` by `new` when none is held or `new` ranks lower.
fn keep_lowest<T, K: Ord>(held: &mut Option<T>, new: T, rank: impl Fn(&T) -> K) {
    if held.as_ref().is_none_or(|h| rank(&new) < rank(h)) {
        *held = Some(new);
    }
}

/// A TransactionEvent's `eventType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Started,
    Updated,
    Ended,
}

impl EventType {
    pub fn from_name(name: &str) -> Option<EventType> {
        Some(match name {
            "Started" => EventType::Started,
            "Updated" => EventType::Updated,
            "Ended" => EventType::Ended,
            _ => return None,
        })
    }
}
