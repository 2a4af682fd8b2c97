//! What the command generator (`--command`, see `commands`) asks of each charger.

use hyper::Method;

/// What the generator asks the chargers to do: actions every charger answers at once, and
/// that change nothing on it; or, to price the REST request alone, no action at all.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandAction {
    DataTransfer,
    GetLocalListVersion,
    /// `GET /api/v3/chargers/{uuid}`: no action, a baseline (HTTP, the token, the charger).
    ReadCharger,
}

impl CommandAction {
    /// Its name in the summary: the action's path segment.
    pub fn name(self) -> &'static str {
        match self {
            CommandAction::DataTransfer => "data-transfer",
            CommandAction::GetLocalListVersion => "get-local-list-version",
            CommandAction::ReadCharger => "read-charger",
        }
    }

    /// The request for the charger `uuid`: method, path and body (the OCPP request payload).
    pub fn request(self, uuid: &str) -> (Method, String, &'static str) {
        let action = |body| {
            let path = format!("/api/v3/chargers/{uuid}/actions/{}?wait=0", self.name());
            (Method::POST, path, body)
        };
        match self {
            CommandAction::DataTransfer => action(r#"{"vendorId":"cms.loadtest"}"#),
            CommandAction::GetLocalListVersion => action("{}"),
            CommandAction::ReadCharger => (Method::GET, format!("/api/v3/chargers/{uuid}"), ""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requests_name_the_charger_and_carry_json_objects() {
        for action in [
            CommandAction::DataTransfer,
            CommandAction::GetLocalListVersion,
        ] {
            let (method, path, body) = action.request("u-1");
            assert_eq!(method, Method::POST);
            assert_eq!(
                path,
                format!("/api/v3/chargers/u-1/actions/{}?wait=0", action.name())
            );
            let body: serde_json::Value = serde_json::from_str(body).unwrap();
            assert!(body.is_object(), "{action:?}");
        }
        let (method, path, _) = CommandAction::ReadCharger.request("u-1");
        assert_eq!(
            (method, path.as_str()),
            (Method::GET, "/api/v3/chargers/u-1")
        );
    }
}
