//! One probe charger: connects and boots, times until every replica shows it `online`; then
//! sends a reading a second and times until every replica serves it; every 30 s closes, times
//! until no replica shows it `online`, and starts again. The central system's calls are
//! answered as they come, whatever the probe is waiting for.

use super::record::Kind;
use super::{Setup, VISIBLE_WITHIN, lock};
use crate::api::ApiClient;
use crate::connect;
use crate::ocpp::{self, Incoming};
use futures_util::{SinkExt, StreamExt};
use hyper::Method;
use std::net::Ipv4Addr;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, sleep_until, timeout_at};
use tokio_tungstenite::tungstenite::Message;

/// How long a probe stays connected before it closes and reconnects.
const RECONNECT_EVERY: Duration = Duration::from_secs(30);
/// Time between readings.
const READING_EVERY: Duration = Duration::from_secs(1);
/// Time between two GETs of one replica while waiting for it.
const POLL_EVERY: Duration = Duration::from_millis(10);
/// Longest wait for a connection, or for the answer to a call.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Plays the probe until `setup.stop_at`, starting after `offset`.
pub async fn run(setup: Setup, identity: String, uuid: String, offset: Duration) {
    let mut probe = Probe {
        clients: setup
            .replicas
            .iter()
            .map(|&a| ApiClient::new(a, &setup.token))
            .collect(),
        charger_path: format!("/api/v3/chargers/{uuid}"),
        reading_path: format!("/api/v3/chargers/{uuid}/connectors/1/latest-metervalue"),
        // Each reading's value is its own, in this run and against what earlier runs left.
        energy_wh: chrono::Utc::now().timestamp().max(0) as u64,
        identity,
        setup,
    };
    sleep(offset).await;
    while Instant::now() < probe.setup.stop_at {
        if let Err(e) = probe.session().await {
            let what = format!("{}: {e}", probe.identity);
            lock(&probe.setup.record).failure(what);
            sleep(Duration::from_secs(1)).await;
        }
    }
}

struct Probe {
    setup: Setup,
    identity: String,
    /// One kept-alive connection per replica.
    clients: Vec<ApiClient>,
    charger_path: String,
    reading_path: String,
    energy_wh: u64,
}

impl Probe {
    /// One connection: boot, readings for 30 s (or until the end), close.
    async fn session(&mut self) -> Result<(), String> {
        let mut link = Link::open(&self.setup.target, &self.identity).await?;
        let booted = link
            .call("BootNotification", ocpp::boot_notification())
            .await;
        let (payload, answered) = match booted {
            Ok(answer) => answer,
            Err(e) => {
                link.close().await;
                return Err(format!("BootNotification: {e}"));
            }
        };
        if ocpp::boot_status(&payload).as_deref() != Some("Accepted") {
            link.close().await;
            return Err(format!("BootNotification not accepted: {payload}"));
        }
        self.wait_all(Kind::Connection, answered, |body| {
            connection_status(body).as_deref() == Some("online")
        })
        .await;
        let status = ocpp::status_notification(1, "Available", &ocpp::now());
        let result = match link.call("StatusNotification", &status).await {
            Ok(_) => self.readings(&mut link).await,
            Err(e) => Err(format!("StatusNotification: {e}")),
        };
        let closed = link.close().await;
        self.wait_all(Kind::Disconnect, closed, |body| {
            connection_status(body).is_some_and(|s| s != "online")
        })
        .await;
        result
    }

    /// Readings, one a second, each timed until every replica serves it.
    async fn readings(&mut self, link: &mut Link) -> Result<(), String> {
        let until = (Instant::now() + RECONNECT_EVERY).min(self.setup.stop_at);
        while Instant::now() < until {
            // The API keeps the timestamp to the second only: the reading is told by its
            // value, which only grows.
            self.energy_wh += 1;
            let value = self.energy_wh.to_string();
            let timestamp = ocpp::now();
            let sent = Instant::now();
            let payload = meter_values(&timestamp, self.energy_wh);
            link.call("MeterValues", &payload)
                .await
                .map_err(|e| format!("MeterValues: {e}"))?;
            self.wait_all(Kind::Fresh, sent, |body| {
                reading_value(body).as_deref() == Some(value.as_str())
            })
            .await;
            sleep_until(sent + READING_EVERY).await;
        }
        Ok(())
    }

    /// GETs each replica every 10 ms, all at once, until `shown` holds for its answer, and
    /// records how long after `from` that was (missed after `VISIBLE_WITHIN`). Cut short,
    /// unrecorded, past the end of the run.
    async fn wait_all(&mut self, kind: Kind, from: Instant, shown: impl Fn(&[u8]) -> bool) {
        let path = match kind {
            Kind::Fresh => &self.reading_path,
            Kind::Connection | Kind::Disconnect => &self.charger_path,
        };
        let deadline = from + VISIBLE_WITHIN;
        let cut = self.setup.stop_at + Duration::from_secs(2);
        let shown = &shown;
        let waits = self.clients.iter_mut().map(|client| async move {
            loop {
                let asked = Instant::now();
                if asked >= cut {
                    return Err(());
                }
                if asked >= deadline {
                    return Ok(None);
                }
                let get = client.request(Method::GET, path, "");
                if let Ok(Ok((200, body))) = timeout_at(deadline.min(cut), get).await
                    && shown(&body)
                {
                    return Ok(Some(Instant::now().duration_since(from)));
                }
                sleep_until(asked + POLL_EVERY).await;
            }
        });
        let results = futures_util::future::join_all(waits).await;
        let mut record = lock(&self.setup.record);
        for (replica, result) in results.into_iter().enumerate() {
            if let Ok(took) = result {
                record.seen(kind, replica, took);
            }
        }
    }
}

/// `data.connection_status` of a charger's answer.
fn connection_status(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    Some(v["data"]["connection_status"].as_str()?.to_string())
}

/// The value of the first sample of a `latest-metervalue` answer.
fn reading_value(body: &[u8]) -> Option<String> {
    let v: serde_json::Value = serde_json::from_slice(body).ok()?;
    Some(
        v["meterValue"][0]["sampledValue"][0]["value"]
            .as_str()?
            .to_string(),
    )
}

/// A MeterValues of connector 1 with one reading of the energy register.
fn meter_values(timestamp: &str, energy_wh: u64) -> String {
    format!(
        concat!(
            r#"{{"connectorId":1,"meterValue":[{{"timestamp":"{}","sampledValue":["#,
            r#"{{"value":"{}","context":"Sample.Periodic","#,
            r#""measurand":"Energy.Active.Import.Register","unit":"Wh"}}]}}]}}"#
        ),
        timestamp, energy_wh
    )
}

/// A probe's websocket: a reader task that answers the central system's calls and hands on
/// the answers to the probe's own, and a writer task that sends what both have to send.
struct Link {
    out: mpsc::UnboundedSender<Message>,
    answers: mpsc::UnboundedReceiver<(String, Result<String, String>, Instant)>,
    reader: JoinHandle<()>,
    writer: JoinHandle<()>,
    next_id: u64,
}

impl Link {
    async fn open(target: &connect::Target, identity: &str) -> Result<Link, String> {
        let connecting = async {
            let tcp = connect::tcp(Ipv4Addr::LOCALHOST, target.addr).await?;
            connect::upgrade(tcp, target, identity, "ocpp1.6").await
        };
        let ws = timeout_at(Instant::now() + CALL_TIMEOUT, connecting)
            .await
            .map_err(|_| "connecting took over 10 s".to_string())?
            .map_err(|e| format!("connecting: {e}"))?;
        let (mut sink, mut stream) = ws.split();
        let (out, mut outgoing) = mpsc::unbounded_channel::<Message>();
        let (answer_tx, answers) = mpsc::unbounded_channel();
        let writer = tokio::spawn(async move {
            while let Some(message) = outgoing.recv().await {
                let close = matches!(message, Message::Close(_));
                if sink.send(message).await.is_err() || close {
                    break;
                }
            }
        });
        let replies = out.clone();
        let reader = tokio::spawn(async move {
            while let Some(Ok(message)) = stream.next().await {
                let Message::Text(text) = message else {
                    continue;
                };
                let at = Instant::now();
                let answer = match ocpp::parse(text.as_str()) {
                    Some(Incoming::Call { id, action }) => {
                        let _ = replies.send(Message::text(ocpp::reply_to(&id, &action)));
                        continue;
                    }
                    Some(Incoming::Result { id, payload }) => (id, Ok(payload.to_string()), at),
                    Some(Incoming::Error { id, code }) => (id, Err(code), at),
                    None => continue,
                };
                if answer_tx.send(answer).is_err() {
                    break;
                }
            }
        });
        Ok(Link {
            out,
            answers,
            reader,
            writer,
            next_id: 0,
        })
    }

    /// Sends a call and waits for its answer: the payload and when it arrived.
    async fn call(&mut self, action: &str, payload: &str) -> Result<(String, Instant), String> {
        self.next_id += 1;
        let id = format!("p{}", self.next_id);
        self.out
            .send(Message::text(ocpp::call(&id, action, payload)))
            .map_err(|_| "the connection closed".to_string())?;
        let deadline = Instant::now() + CALL_TIMEOUT;
        loop {
            match timeout_at(deadline, self.answers.recv()).await {
                Err(_) => return Err("no answer within 10 s".into()),
                Ok(None) => return Err("the connection closed".into()),
                Ok(Some((got, answer, at))) if got == id => {
                    return answer
                        .map(|p| (p, at))
                        .map_err(|code| format!("CALLERROR {code}"));
                }
                Ok(Some(_)) => {}
            }
        }
    }

    /// Closes the websocket (a close frame, a moment for the server's, then the socket);
    /// returns when the close was sent.
    async fn close(self) -> Instant {
        let closed = Instant::now();
        let _ = self.out.send(Message::Close(None));
        let mut reader = self.reader;
        if tokio::time::timeout(Duration::from_secs(2), &mut reader)
            .await
            .is_err()
        {
            reader.abort();
        }
        self.writer.abort();
        closed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reading_is_a_meter_values_of_one_sample() {
        let v: serde_json::Value =
            serde_json::from_str(&meter_values("2025-01-02T03:04:05.678Z", 120)).unwrap();
        assert_eq!(v["connectorId"], 1);
        assert_eq!(v["meterValue"][0]["timestamp"], "2025-01-02T03:04:05.678Z");
        let sampled = v["meterValue"][0]["sampledValue"].as_array().unwrap();
        assert_eq!(sampled.len(), 1);
        assert_eq!(sampled[0]["value"], "120");
        assert_eq!(sampled[0]["measurand"], "Energy.Active.Import.Register");
    }

    #[test]
    fn the_connection_status_and_the_reading_are_read_from_the_answers() {
        let body = br#"{"data":{"uuid":"u","connection_status":"online"}}"#;
        assert_eq!(connection_status(body).as_deref(), Some("online"));
        assert_eq!(connection_status(b"{}"), None);
        assert_eq!(connection_status(b"not json"), None);
        // As the API answers a reading: its timestamp to the second, format added.
        let reading = br#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-29T15:39:29Z","sampledValue":[{"value":"20","context":"Sample.Periodic","format":"Raw","measurand":"Energy.Active.Import.Register","unit":"Wh"}]}]}"#;
        assert_eq!(reading_value(reading).as_deref(), Some("20"));
        assert_eq!(reading_value(br#"{"connectorId":1,"meterValue":[]}"#), None);
    }
}
