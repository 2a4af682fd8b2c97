// The console's pages: the address (after `#`) each answers, its title, whether the navigation
// lists it, and its module, loaded when first shown. A page module exports
// `render(view, {api}, params)`, which fills `view` and may return (or resolve to) a function
// that stops its live streams when the user leaves.

export const pages = [
  { pattern: /^\/$/, title: "Overview", nav: "/", load: () => import("./overview.js") },
  { pattern: /^\/chargers$/, title: "Chargers", nav: "/chargers", load: () => import("./chargers.js") },
  { pattern: /^\/chargers\/([^/]+)$/, title: "Charger", load: () => import("./charger.js") },
  { pattern: /^\/sessions$/, title: "Sessions", nav: "/sessions", load: () => import("./sessions.js") },
  { pattern: /^\/sessions\/([^/]+)\/([^/]+)$/, title: "Session", load: () => import("./session.js") },
  { pattern: /^\/id-tags$/, title: "Id tags", nav: "/id-tags", load: () => import("./id_tags.js") },
  { pattern: /^\/sites$/, title: "Sites", nav: "/sites", load: () => import("./sites.js") },
  { pattern: /^\/sites\/([^/]+)\/smart-charging$/, title: "Smart charging", load: () => import("./smart_charging.js") },
];
