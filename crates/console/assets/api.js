// The REST API from the console: JSON with the bearer token, the reference's error shape turned
// into an exception, and server-sent-event streams read with fetch (EventSource cannot send an
// Authorization header, and a token must not go in a URL).

import { accessToken, refresh, signIn } from "./auth.js";

/** An API answer other than 2xx: `status`, the reference's `message` and `errors`. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `The API answered ${status}.`);
    this.status = status;
    this.errors = body?.errors || {};
  }
}

async function call(method, path, body, retried = false) {
  const headers = { Accept: "application/json", Authorization: `Bearer ${accessToken()}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.status === 401 && !retried) {
    if (await refresh()) return call(method, path, body, true);
    await signIn();
    throw new ApiError(401, { message: "Signed out." });
  }
  if (response.status === 204) return null;
  const text = await response.text();
  const parsed = text ? JSON.parse(text) : null;
  if (!response.ok) throw new ApiError(response.status, parsed);
  return parsed;
}

export const api = {
  get: (path) => call("GET", path),
  post: (path, body) => call("POST", path, body),
  put: (path, body) => call("PUT", path, body),
  patch: (path, body) => call("PATCH", path, body),
  delete: (path) => call("DELETE", path),
  /** Every item of a paginated list (following `links.next`), at most `limit` of them. */
  async all(path, limit = 1000) {
    const items = [];
    let next = path;
    while (next && items.length < limit) {
      const page = await call("GET", next);
      items.push(...page.data);
      next = page.links?.next ? new URL(page.links.next, location.origin).pathname + new URL(page.links.next, location.origin).search : null;
    }
    return items;
  },
  /** Reads the server-sent events of `path`, calling `onEvent({event, data})` with `data`
   * parsed as JSON where it is; reconnects after a drop, backing off up to 30 s. `onError`, if
   * given, hears each failed attempt (an `ApiError` for an answer other than 2xx); returning
   * `false` from it stops the stream (a 404: a server without that stream). Returns a
   * function that stops it. */
  stream(path, onEvent, onError) {
    const control = new AbortController();
    let backoff = 1000;
    const run = async () => {
      while (!control.signal.aborted) {
        try {
          const response = await fetch(path, {
            headers: { Accept: "text/event-stream", Authorization: `Bearer ${accessToken()}` },
            signal: control.signal,
          });
          if (response.status === 401 && !(await refresh())) return signIn();
          if (!response.ok) throw new ApiError(response.status, null);
          backoff = 1000;
          await readEvents(response.body, onEvent);
        } catch (error) {
          if (control.signal.aborted) return;
          if (onError && onError(error) === false) return;
        }
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, 30000);
      }
    };
    run();
    return () => control.abort();
  },
};

async function readEvents(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      const text = data.join("\n");
      let parsed = text;
      try { parsed = JSON.parse(text); } catch { /* not JSON: passed on as text */ }
      onEvent({ event, data: parsed });
    }
  }
}
