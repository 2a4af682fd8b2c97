//! The console's files, built into the binary. A file added to `assets/` must be named here
//! too: a test fails while one is missing.

/// A file of the console: its path under `/console/`, its media type and its bytes.
pub struct Asset {
    pub path: &'static str,
    pub content_type: &'static str,
    pub body: &'static [u8],
}

macro_rules! assets {
    ($($path:literal => $type:literal,)*) => {
        /// Every file of the console.
        pub static ASSETS: &[Asset] = &[
            $(Asset {
                path: $path,
                content_type: $type,
                body: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/", $path)),
            },)*
        ];
    };
}

assets! {
    "index.html" => "text/html; charset=utf-8",
    "style.css" => "text/css; charset=utf-8",
    "app.js" => "text/javascript; charset=utf-8",
    "api.js" => "text/javascript; charset=utf-8",
    "auth.js" => "text/javascript; charset=utf-8",
    "dom.js" => "text/javascript; charset=utf-8",
    "pages/index.js" => "text/javascript; charset=utf-8",
    "pages/overview.js" => "text/javascript; charset=utf-8",
    "pages/live.js" => "text/javascript; charset=utf-8",
    "pages/chargers.js" => "text/javascript; charset=utf-8",
    "pages/charger.js" => "text/javascript; charset=utf-8",
    "pages/charger-settings.js" => "text/javascript; charset=utf-8",
    "pages/charger-commands.js" => "text/javascript; charset=utf-8",
    "pages/charger-diagnostics.js" => "text/javascript; charset=utf-8",
    "pages/schema.js" => "text/javascript; charset=utf-8",
    "pages/sessions.js" => "text/javascript; charset=utf-8",
    "pages/session.js" => "text/javascript; charset=utf-8",
    "pages/id_tags.js" => "text/javascript; charset=utf-8",
    "pages/sites.js" => "text/javascript; charset=utf-8",
    "pages/smart_charging.js" => "text/javascript; charset=utf-8",
    "pages/team_picker.js" => "text/javascript; charset=utf-8",
    "pages/chart.js" => "text/javascript; charset=utf-8",
    "vendor/uplot/uPlot.esm.js" => "text/javascript; charset=utf-8",
    "vendor/uplot/uPlot.min.css" => "text/css; charset=utf-8",
    "vendor/uplot/LICENSE" => "text/plain; charset=utf-8",
    "vendor/uplot/README" => "text/plain; charset=utf-8",
}

/// The file at `path` (relative to `/console/`), if the console has one.
pub fn find(path: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|asset| asset.path == path)
}
