//! The websocket upgrade over TLS as any TLS client may send it.

use super::TlsCms;
use super::wss_charger::upgrade_sent_with_the_finished;

/// TLS 1.3 lets a client send its first data right behind its Finished, and busy clients do:
/// the request then reaches the gateway together with the end of the TLS handshake.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgrade_request_sent_together_with_the_tls_finished_is_answered() {
    let tls = TlsCms::up().await;
    tls.add_charger("CP-TLS-EAGER", 0).await;

    let answer =
        upgrade_sent_with_the_finished(&tls.pki, &tls.wss_authority(), "CP-TLS-EAGER").await;
    assert_eq!(
        answer.as_deref(),
        Ok("HTTP/1.1 101 Switching Protocols"),
        "expected the upgrade sent in the same write as the client's TLS Finished to be \
         answered 101"
    );
}
