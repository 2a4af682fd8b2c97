//! `cms up`: the API reads chargers' last frames and connection attempts from the memory of
//! the gateway of the same process.

use cms_api::{ChargerDiagnostics, ConnectionAttempt, Frame, FramesRead};
use cms_gateway::GatewayDiagnostics;

pub struct FromGateway(pub GatewayDiagnostics);

impl ChargerDiagnostics for FromGateway {
    /// Empty, not unknown, when the gateway holds none of the charger's frames.
    fn frames<'a>(&'a self, identity: &'a str, _connected: bool) -> FramesRead<'a> {
        let frames = self.0.frames(identity).unwrap_or_default();
        let frames = frames
            .into_iter()
            .map(|f| Frame {
                at: f.at,
                incoming: f.incoming,
                shown: cms_ocpp::masking::shown(&f.bytes, f.len),
            })
            .collect();
        Box::pin(std::future::ready(Ok(frames)))
    }

    fn attempts(&self, identity: &str) -> Vec<ConnectionAttempt> {
        self.0
            .attempts(identity)
            .into_iter()
            .map(|a| ConnectionAttempt {
                at: a.at,
                peer: a.peer,
                refused: a.refused.map(|r| r.as_str().to_string()),
            })
            .collect()
    }
}
