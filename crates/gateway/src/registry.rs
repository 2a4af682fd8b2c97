//! The charger directory of a gateway, in memory: in `cms gateway` the compacted registry topic,
//! read from its beginning and followed from then on; in `cms up` the store's registry change
//! log, followed the same way. Handshakes look chargers up here and never ask a database, so a
//! stranger's handshake costs the store nothing and no handshake queues behind it.

use crate::directory::{ChargerDirectory, DirectoryError, Registration};
use crate::follow::Materialised;
use cms_bus::{BoxFuture, Message, ProxySetup, RegistryState, SiteAuthorization, registry_state};
use dashmap::DashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// What is told of a change of a charger's registration: its identity.
pub type OnChange = Box<dyn Fn(&str) + Send + Sync>;

/// Reads the registry's source again, and ends once the directory holds what it held when
/// called (or once it gave up waiting).
pub type Refresh = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

#[derive(Default)]
pub struct RegistryDirectory {
    chargers: DashMap<String, Registration>,
    /// False until the topic has been read up to where it stood at start: until then an
    /// unknown charger may just not be read yet, so handshakes are answered 503, not 404.
    caught_up: AtomicBool,
    /// Told of every change of a charger's registration (the gateway tells the charger's live
    /// session, which follows its proxy set-up).
    on_change: OnceLock<OnChange>,
    /// Asked before an identity is answered unknown, where the source can be read on demand
    /// (`cms up`'s change log): a charger another process registered a moment ago connects at
    /// once instead of being refused until the next poll.
    on_miss: OnceLock<Refresh>,
}

impl RegistryDirectory {
    /// Applies one registry record; the last record of an identity is its state.
    pub fn apply(&self, message: &Message) {
        let Ok(identity) = std::str::from_utf8(&message.record.key) else {
            return;
        };
        self.apply_state(identity, registry_state(&message.record.value));
    }

    /// Sets a charger's registration as it is now.
    pub fn apply_state(&self, identity: &str, state: RegistryState) {
        match state {
            RegistryState::Registered(registration) => {
                self.chargers.insert(identity.to_string(), registration);
            }
            RegistryState::Unregistered => {
                self.chargers.remove(identity);
            }
        }
        if let Some(on_change) = self.on_change.get() {
            on_change(identity);
        }
    }

    /// Calls `hook` with the identity of every charger whose registration changes from now on
    /// (set once, by the gateway).
    pub fn on_change(&self, hook: OnChange) {
        if self.on_change.set(hook).is_err() {
            tracing::warn!("the registry already tells another gateway of its changes");
        }
    }

    /// Reads the source with `refresh` before answering an identity unknown (set once).
    pub fn refresh_on_miss(&self, refresh: Refresh) {
        if self.on_miss.set(refresh).is_err() {
            tracing::warn!("the registry already has a way to refresh on a miss");
        }
    }

    /// The driver's price text at a registered 2.0.1 station whose site shows prices, if any.
    pub fn price_text(&self, identity: &str) -> Option<String> {
        self.chargers.get(identity)?.price_text.clone()
    }

    /// Where a registered charger of an `id_tags` site is as OCPI names it.
    pub fn ocpi_location(&self, identity: &str) -> Option<cms_bus::OcpiLocation> {
        self.chargers
            .get(identity)?
            .ocpi_location
            .as_deref()
            .cloned()
    }

    /// The proxy set-up of a registered charger, if it is relayed.
    pub fn proxy(&self, identity: &str) -> Option<ProxySetup> {
        self.chargers.get(identity)?.proxy.clone()
    }

    pub fn set_caught_up(&self) {
        self.caught_up.store(true, Ordering::Release);
    }

    pub fn is_caught_up(&self) -> bool {
        self.caught_up.load(Ordering::Acquire)
    }

    pub fn len(&self) -> usize {
        self.chargers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.chargers.is_empty()
    }

    /// The authorization of a registered charger's site.
    pub fn authorization(&self, identity: &str) -> Option<SiteAuthorization> {
        let registration = self.chargers.get(identity)?;
        Some(registration.authorization.clone())
    }
}

impl Materialised for RegistryDirectory {
    const WHAT: &'static str = "charger registry";

    fn apply(&self, message: &Message) {
        RegistryDirectory::apply(self, message);
    }

    fn entries(&self) -> usize {
        self.chargers.len()
    }

    fn set_caught_up(&self) {
        RegistryDirectory::set_caught_up(self);
    }

    fn is_caught_up(&self) -> bool {
        RegistryDirectory::is_caught_up(self)
    }
}

impl ChargerDirectory for RegistryDirectory {
    fn lookup<'a>(
        &'a self,
        identity: &'a str,
    ) -> BoxFuture<'a, Result<Option<Registration>, DirectoryError>> {
        Box::pin(async move {
            if !self.is_caught_up() {
                return Err(DirectoryError(
                    "the charger registry is still loading".into(),
                ));
            }
            if let Some(found) = self.chargers.get(identity) {
                return Ok(Some(found.clone()));
            }
            if let Some(refresh) = self.on_miss.get() {
                refresh().await;
            }
            Ok(self.chargers.get(identity).map(|r| r.clone()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use cms_bus::{Topics, registry_record};

    fn message(identity: &str, state: Option<Option<&str>>) -> Message {
        let state = match state {
            Some(password_hash) => RegistryState::Registered(Registration {
                password_hash: password_hash.map(str::to_string),
                security_profile: u8::from(password_hash.is_some()),
                authorization: SiteAuthorization::Open,
                proxy: None,
                price_text: None,
                ocpi_location: None,
            }),
            None => RegistryState::Unregistered,
        };
        let record = registry_record(&Topics::with_prefix("t"), identity, &state);
        Message {
            record,
            partition: 0,
            offset: 0,
        }
    }

    fn tombstone(identity: &str) -> Message {
        let mut message = message(identity, None);
        message.record.value = Bytes::new();
        message
    }

    #[tokio::test]
    async fn the_last_record_of_a_charger_is_its_registration() {
        let directory = RegistryDirectory::default();
        let hash = "sha256$00$11";
        directory.apply(&message("CP-1", Some(None)));
        directory.apply(&message("CP-2", Some(Some(hash))));
        directory.apply(&message("CP-3", Some(Some(hash))));
        directory.apply(&message("CP-3", None));
        directory.apply(&message("CP-4", Some(Some(hash))));
        directory.apply(&tombstone("CP-4"));
        assert!(directory.lookup("CP-2").await.is_err(), "not caught up yet");
        directory.set_caught_up();
        let without_password = Registration {
            password_hash: None,
            security_profile: 0,
            authorization: SiteAuthorization::Open,
            proxy: None,
            price_text: None,
            ocpi_location: None,
        };
        let with_password = Registration {
            password_hash: Some(hash.into()),
            security_profile: 1,
            authorization: SiteAuthorization::Open,
            proxy: None,
            price_text: None,
            ocpi_location: None,
        };
        assert_eq!(
            directory.lookup("CP-1").await.unwrap(),
            Some(without_password)
        );
        assert_eq!(directory.lookup("CP-2").await.unwrap(), Some(with_password));
        assert_eq!(directory.lookup("CP-3").await.unwrap(), None);
        assert_eq!(directory.lookup("CP-4").await.unwrap(), None);
    }
}
