// Why a charger does not connect: its last connection attempts, with the reason cms refused
// each in words, and its last OCPP frames both ways.

import { h, replace, table, when } from "../dom.js";
import { unavailableNote } from "./live.js";

/** The API's refusal reasons (`reason` of a connection attempt) in an operator's words. */
export const REASONS = {
  unknown_identity: "unknown identity (no charger registered by that name)",
  wrong_password: "wrong password",
  no_password: "no password sent",
  tls_required: "profile needs TLS (connect with wss://)",
  no_certificate: "no client certificate",
  certificate_subject: "the certificate names another charger",
  no_subprotocol: "no agreed OCPP subprotocol",
  takeover: "another connection took its place",
  capacity: "the gateway was full",
};

export function renderDiagnostics(api, path) {
  const attempts = h("div", {});
  const frames = h("div", {});
  const into = h("div", {}, h("h3", {}, "Last connection attempts"), attempts, h("h3", {}, "Last OCPP messages"), frames,
    h("button", { type: "button", onclick: () => load() }, "Read again"));
  const load = () => {
    fill(api, `${path}/connection-attempts`, attempts, "Connection attempts", (list) => table([
      ["When", (a) => when(a.at)],
      ["From", (a) => a.peer || "–"],
      ["Outcome", (a) => h("span", { class: a.outcome === "accepted" ? "status-Accepted" : "status-error" }, a.outcome)],
      ["Reason", (a) => (a.reason ? h("span", { "data-testid": "reason" }, REASONS[a.reason] || a.reason) : "–")],
    ], list, "Newest first"));
    fill(api, `${path}/messages`, frames, "The message log", (list) => table([
      ["When", (m) => when(m.at)],
      ["Direction", (m) => (m.direction === "in" ? "from the charger" : "to the charger")],
      ["Frame", (m) => h("pre", {}, m.frame)],
    ], list, "Newest first"));
  };
  load();
  return into;
}

async function fill(api, path, into, what, draw) {
  try {
    const list = (await api.get(path)).data;
    replace(into, list.length ? draw(list) : h("p", { class: "muted" }, "None recorded."));
  } catch (error) {
    replace(into, error.status === 404 ? unavailableNote(h, what) : h("p", { class: "error" }, error.message));
  }
}
