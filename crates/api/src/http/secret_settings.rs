//! Which configuration values the API refuses to send a charger, whether through its settings
//! or a ChangeConfiguration action: the charger's own password (rotated through its security
//! instead), the mask cms shows for a secret, and any secret when there is no key to seal it.

use cms_ocpp::v16::secrets;

/// Why `key` may not be changed to `value` by a ChangeConfiguration from the API, if it may
/// not: the charger's own password goes through `PUT .../security` (which changes it on the
/// charger and in cms together); another secret needs the key to seal it for the gateways
/// (`can_seal`), and a value other than the mask cms shows for it.
pub(crate) fn secret_refusal(key: &str, value: &str, can_seal: bool) -> Option<String> {
    if key.eq_ignore_ascii_case(secrets::AUTHORIZATION_KEY) {
        return Some(format!(
            "The {key} setting is the charger's password: change it with PUT \
             /api/v3/chargers/{{charger_uuid}}/security, which changes it on the charger and in \
             cms together."
        ));
    }
    if !secrets::is_secret_key(key) {
        return None;
    }
    if value == secrets::MASK {
        return Some(format!(
            "The {key} setting is write-only: {} is how cms shows it, not a value.",
            secrets::MASK
        ));
    }
    (!can_seal).then(|| {
        format!(
            "The {key} setting is a secret, and this API has no --secrets-key to send it to the \
             charger's gateway sealed."
        )
    })
}
