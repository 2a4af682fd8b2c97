//! Checking a login password off the async workers. PBKDF2 at 600,000 iterations holds a core
//! for a tenth of a second or more: on an async worker it would stall every request that worker
//! serves. So each check runs on tokio's blocking pool, at most one per core at a time; a burst
//! of logins waits its turn (asynchronously) instead of taking every core or piling up threads.

use cms_credentials::verify_password;
use std::sync::LazyLock;
use tokio::sync::Semaphore;

/// A well-formed hash no password is checked against successfully (for an unknown e-mail or a
/// user without a password), at the real iteration count so that it costs as much as a known
/// one: the answer's timing does not tell which e-mails have accounts.
pub(super) const NO_PASSWORD: &str =
    "pbkdf2-sha256$600000$00$0000000000000000000000000000000000000000000000000000000000000000";

/// One permit per core: password checks of the whole process (every store shares them, as they
/// share the cores).
static CHECKS: LazyLock<Semaphore> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Semaphore::new(cores)
});

/// Whether `password` matches `stored` (the user's hash; `None` when there is no such user or
/// the user has no password, which never matches but costs the same).
pub(crate) async fn password_matches(password: &str, stored: Option<String>) -> bool {
    let exists = stored.is_some();
    let hash = stored.unwrap_or_else(|| NO_PASSWORD.to_string());
    let password = password.to_string();
    // Never closed, so acquiring only waits.
    let Ok(_permit) = CHECKS.acquire().await else {
        return false;
    };
    let checked =
        tokio::task::spawn_blocking(move || verify_password(&password, &hash).unwrap_or(false))
            .await;
    match checked {
        Ok(matches) => matches && exists,
        Err(e) => {
            // Only when the runtime shuts down, or the check panicked: refuse the login.
            tracing::error!(error = %e, "a password check did not finish");
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_credentials::hash_password;
    use std::time::Duration;

    /// The iteration count of a stored hash (`pbkdf2-sha256$<iterations>$...`).
    fn iterations(stored: &str) -> &str {
        stored.split('$').nth(1).expect("an iteration count")
    }

    #[test]
    fn an_unknown_email_costs_as_many_iterations_as_a_real_password() {
        assert_eq!(
            iterations(NO_PASSWORD),
            iterations(&hash_password("anything"))
        );
        assert_eq!(verify_password("", NO_PASSWORD), Ok(false));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_password_check_leaves_the_async_worker_free() {
        let stored = hash_password("correct horse");
        let check =
            tokio::spawn(async move { password_matches("correct horse", Some(stored)).await });
        // On the only worker thread: these ticks happen only if the hash runs elsewhere.
        let mut ticks = 0;
        while !check.is_finished() {
            tokio::time::sleep(Duration::from_millis(1)).await;
            ticks += 1;
        }
        assert!(check.await.unwrap(), "the right password matches");
        assert!(
            ticks >= 5,
            "the worker was held during the hash: {ticks} ticks"
        );
        assert!(!password_matches("correct horse", None).await);
    }
}
