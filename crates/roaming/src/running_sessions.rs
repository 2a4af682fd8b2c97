//! Running sessions pushed while they run (kWh and the running cost), on a timer.

use cms_store::Store;
use cms_store::ocpi::pushes::NewPush;

/// The session updates due now, for every registered party.
pub async fn due(_store: &Store) -> cms_store::Result<Vec<NewPush>> {
    Ok(Vec::new())
}
