// The fleet's live changes from `GET /api/v3/chargers/stream`, batched: however fast chargers
// change, a page applies them at most once a second, in one go (one repaint), the newest state
// of each charger only.

const EVERY_MS = 1000;

/** Calls `apply(changed)` with the chargers changed since the last call, at most once a
 * second; `unavailable()` when this server has no such stream (404). Returns the stop. */
export function watchChargers(api, apply, unavailable) {
  let pending = new Map();
  let timer = null;
  let applied = 0;
  const flush = () => {
    timer = null;
    applied = Date.now();
    const changed = [...pending.values()];
    pending = new Map();
    if (changed.length) apply(changed);
  };
  const stop = api.stream("/api/v3/chargers/stream", ({ event, data }) => {
    if (event !== "chargers" || !Array.isArray(data)) return;
    for (const charger of data) pending.set(charger.uuid, charger);
    if (!timer) timer = setTimeout(flush, Math.max(0, applied + EVERY_MS - Date.now()));
  }, (error) => {
    if (error.status === 404) {
      unavailable();
      return false;
    }
    return true;
  });
  return () => {
    stop();
    clearTimeout(timer);
  };
}

/** A charger's state in words and as a CSS class: `online`, `offline`, `faulted`, `never seen`. */
export function connection(charger) {
  const online = charger.online ?? charger.connection_status === "online";
  if (charger.status === "Faulted") return "faulted";
  if (online) return "online";
  return charger.connection_status === "never_seen" ? "never seen" : "offline";
}

/** A note that a part of the page needs what this server does not offer yet. */
export function unavailableNote(h, what) {
  return h("p", { class: "note", role: "note" }, `${what} is not available on this server.`);
}
