// Commands to a charger: forms for the common ones and a JSON editor for any action, each body
// checked against the action's request schema before it is sent. The outcome is shown as it
// comes: the POST waits (`?wait=`) for the charger's answer; an action still going when that
// wait ends is read again only when its own deadline or time-out says it must have ended.

import { h, replace, when } from "../dom.js";
import { requestSchema, check } from "./schema.js";

const WAIT_S = 25;
/** cms's default `--action-timeout`: a sent action has ended by then (plus a margin). */
const ACTION_TIMEOUT_MS = 30000;
const ACTIONS_16 = ["cancel-reservation", "change-availability", "change-configuration", "clear-cache",
  "clear-charging-profile", "data-transfer", "get-composite-schedule", "get-configuration", "get-diagnostics",
  "get-local-list-version", "remote-start-transaction", "remote-stop-transaction", "reserve-now", "reset",
  "send-local-list", "set-charging-profile", "trigger-message", "unlock-connector", "update-firmware"];
const ACTIONS_201 = ["change-availability", "clear-cache", "data-transfer", "get-base-report", "get-report",
  "get-transaction-status", "get-variables", "request-start-transaction", "request-stop-transaction", "reset",
  "set-variables", "trigger-message", "unlock-connector"];
/** The CALLERROR codes of OCPP-J: a `failed` action with one of them is the charger's refusal. */
const CALL_ERRORS = ["NotImplemented", "NotSupported", "InternalError", "ProtocolError", "SecurityError",
  "FormationViolation", "FormatViolation", "PropertyConstraintViolation", "OccurenceConstraintViolation",
  "OccurrenceConstraintViolation", "TypeConstraintViolation", "GenericError", "MessageTypeNotSupported", "RpcFrameworkError"];

export function renderCommands(api, path, charger, changed) {
  const v201 = charger.ocpp_version === "2.0.1";
  const outcomes = h("ol", { class: "outcomes", "aria-live": "polite", "data-testid": "outcomes" });
  const send = (action, body) => sendAction(api, path, action, v201 ? "2.0.1" : "1.6", body, outcomes, changed);
  const field = (label, input) => h("label", {}, label, input);
  const number = (name, value) => h("input", { type: "number", name, value, min: 0, step: 1, required: true });
  const choice = (name, options) => h("select", { name }, options.map((o) => h("option", { value: o }, o)));
  const form = (title, inputs, build, action) => h("form", { class: "inline command", "aria-label": title,
    onsubmit: (event) => { event.preventDefault(); send(action, build()); } },
  ...inputs, h("button", { type: "submit" }, title));

  const resetType = choice("type", v201 ? ["Immediate", "OnIdle"] : ["Soft", "Hard"]);
  const startConnector = number("connectorId", 1);
  const startTag = h("input", { name: "idTag", required: true, maxlength: 20 });
  const stopTransaction = number("transactionId", "");
  const unlockConnector = number("connectorId", 1);
  const availabilityConnector = number("connectorId", 0);
  const availabilityType = choice("type", ["Operative", "Inoperative"]);
  const trigger = choice("requestedMessage", v201
    ? ["BootNotification", "Heartbeat", "MeterValues", "StatusNotification", "FirmwareStatusNotification", "LogStatusNotification", "TransactionEvent"]
    : ["BootNotification", "Heartbeat", "MeterValues", "StatusNotification", "FirmwareStatusNotification", "DiagnosticsStatusNotification"]);
  const int = (input) => Number(input.value);

  return h("div", {},
    form("Reset", [field("Type", resetType)], () => ({ type: resetType.value }), "reset"),
    form("Remote start", [field("Connector", startConnector), field("Id tag", startTag)], () => (v201
      ? { idToken: { idToken: startTag.value, type: "ISO14443" }, remoteStartId: Date.now() % 2147483647, evseId: int(startConnector) }
      : { connectorId: int(startConnector), idTag: startTag.value }), v201 ? "request-start-transaction" : "remote-start-transaction"),
    form("Remote stop", [field("Transaction", stopTransaction)], () => (v201
      ? { transactionId: stopTransaction.value } : { transactionId: int(stopTransaction) }),
    v201 ? "request-stop-transaction" : "remote-stop-transaction"),
    form("Unlock", [field("Connector", unlockConnector)], () => (v201
      ? { evseId: int(unlockConnector), connectorId: 1 } : { connectorId: int(unlockConnector) }), "unlock-connector"),
    form("Change availability", [field("Connector (0: the whole charger)", availabilityConnector), field("Availability", availabilityType)],
      () => (v201
        ? { operationalStatus: availabilityType.value, ...(int(availabilityConnector) ? { evse: { id: int(availabilityConnector) } } : {}) }
        : { connectorId: int(availabilityConnector), type: availabilityType.value }), "change-availability"),
    form("Trigger message", [field("Message", trigger)], () => ({ requestedMessage: trigger.value }), "trigger-message"),
    form("Clear cache", [], () => ({}), "clear-cache"),
    editor(v201 ? ACTIONS_201 : ACTIONS_16, v201 ? "2.0.1" : "1.6", send),
    h("h3", {}, "Outcomes"), outcomes);
}

/** Any action, its body written as JSON and checked against its schema as it is typed. */
function editor(actions, version, send) {
  const action = h("select", { name: "action" }, actions.map((a) => h("option", { value: a }, a)));
  const body = h("textarea", { name: "body", spellcheck: "false", "aria-describedby": "json-problems" }, "{}");
  const problems = h("ul", { id: "json-problems", class: "error", "aria-live": "polite" });
  const button = h("button", { type: "submit" }, "Send action");
  const validate = async () => {
    let value;
    try {
      value = JSON.parse(body.value || "{}");
    } catch (error) {
      replace(problems, h("li", {}, `Not JSON: ${error.message}`));
      return null;
    }
    const schema = await requestSchema(action.value, version);
    const found = schema ? check(value, schema) : [];
    replace(problems, found.map((p) => h("li", {}, p)));
    if (!schema) problems.append(h("li", { class: "muted" }, "No schema for this action: the server checks it."));
    return found.length ? null : value;
  };
  body.addEventListener("input", validate);
  action.addEventListener("change", validate);
  return h("form", { class: "command", "aria-label": "Any action",
    onsubmit: async (event) => {
      event.preventDefault();
      const value = await validate();
      if (value) send(action.value, value);
    } },
  h("h3", {}, "Any action"),
  h("label", {}, "Action", action),
  h("label", { class: "wide" }, "Request body (JSON)", body),
  problems, button);
}

async function sendAction(api, path, action, version, body, outcomes, changed) {
  const line = h("li", { "data-action": action });
  const say = (text, status) => replace(line, h("strong", {}, action), " ",
    h("span", { class: `status-${status || "pending"}`, "data-testid": "outcome" }, text));
  outcomes.prepend(line);
  const schema = await requestSchema(action, version);
  const problems = schema ? check(body, schema) : [];
  if (problems.length) return say(`Not sent: ${problems.join("; ")}`, "error");
  say("Sending to cms…");
  try {
    let resource = (await api.post(`${path}/actions/${action}?wait=${WAIT_S}`, body)).data;
    say(...describe(resource));
    while (!final(resource)) {
      await new Promise((resolve) => setTimeout(resolve, untilEnded(resource)));
      resource = (await api.get(`${path}/actions/${resource.uuid}`)).data;
      say(...describe(resource));
    }
  } catch (error) {
    const fields = Object.entries(error.errors || {}).map(([field, messages]) => `${field}: ${messages.join(" ")}`);
    say(`Refused by cms: ${[error.message, ...fields].join(" ")}`, "error");
  }
  changed();
}

const final = (a) => !["pending", "sent"].includes(a.status);

/** How long to wait before reading a pending or sent action again: until its deadline (a
 * pending one) or its time-out (a sent one) has passed, at least 5 s. */
function untilEnded(a) {
  const end = a.status === "pending" ? Date.parse(a.expires_at) : Date.parse(a.sent_at) + ACTION_TIMEOUT_MS;
  return Math.max(5000, (Number.isNaN(end) ? Date.now() + ACTION_TIMEOUT_MS : end) - Date.now() + 1000);
}

/** The action's state in words, and its class. */
function describe(a) {
  const error = a.error ? `${a.error.code}${a.error.description ? `: ${a.error.description}` : ""}` : "";
  switch (a.status) {
    case "pending": return ["Taken by cms, waiting its turn to be sent", "pending"];
    case "sent": return [`Sent to the charger at ${when(a.sent_at)}, waiting for its answer`, "sent"];
    case "answered": return [`The charger answered: ${a.response?.status ?? JSON.stringify(a.response)}`,
      a.response?.status || "Accepted"];
    case "failed": return [CALL_ERRORS.includes(a.error?.code) ? `CALLERROR ${error}` : `Failed: ${error}`, "error"];
    case "timed_out": return [`No answer in time (${error})`, "error"];
    case "expired": return [`Expired before it was sent (${error})`, "error"];
    default: return [a.status, "error"];
  }
}
