// Sign-in with cms's own OAuth 2.0 authorisation code flow and PKCE (RFC 7636), as the public
// client `cms-console`. The tokens live in this tab's sessionStorage only: never in a URL, a
// cookie or a log. Sign-out revokes the token at the server (RFC 7009).

export const CLIENT_ID = "cms-console";
const KEY = "cms-console.session";
const PENDING = "cms-console.pending";

const redirectUri = () => `${location.origin}/console/`;

function base64url(bytes) {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

const random = (n) => base64url(crypto.getRandomValues(new Uint8Array(n)));

/** Sends the browser to the authorisation page; it comes back to /console/ with a code. */
export async function signIn() {
  const verifier = random(32);
  const state = random(16);
  const challenge = base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, hash: location.hash }));
  const query = new URLSearchParams({
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: redirectUri(),
    scope: "*",
    state,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  location.assign(`/oauth/authorize?${query}`);
}

/** On the way back from the authorisation page: trades the code for tokens and takes the code
 * out of the address bar. Returns an error message, or null. */
export async function completeSignIn() {
  const query = new URLSearchParams(location.search);
  if (!query.has("code") && !query.has("error")) return null;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || "null");
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, "", `/console/${pending?.hash || ""}`);
  if (query.has("error")) return query.get("error_description") || query.get("error");
  if (!pending || pending.state !== query.get("state")) return "The sign-in answer did not match its request: sign in again.";
  const answer = await tokenRequest({
    grant_type: "authorization_code",
    code: query.get("code"),
    redirect_uri: redirectUri(),
    code_verifier: pending.verifier,
  });
  return answer.error ? answer.error : null;
}

async function tokenRequest(fields) {
  const response = await fetch("/oauth/token", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
    body: new URLSearchParams({ client_id: CLIENT_ID, ...fields }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    sessionStorage.removeItem(KEY);
    return { error: body.error_description || body.message || `Sign-in failed (${response.status}).` };
  }
  sessionStorage.setItem(KEY, JSON.stringify({
    access: body.access_token,
    refresh: body.refresh_token,
    expires: Date.now() + (body.expires_in || 0) * 1000,
  }));
  return {};
}

/** The access token, or null when signed out. */
export function accessToken() {
  return JSON.parse(sessionStorage.getItem(KEY) || "null")?.access || null;
}

/** Trades the refresh token for a new pair; false when there is none or it was refused. */
export async function refresh() {
  const session = JSON.parse(sessionStorage.getItem(KEY) || "null");
  if (!session?.refresh) return false;
  return !(await tokenRequest({ grant_type: "refresh_token", refresh_token: session.refresh })).error;
}

/** Revokes the token at the server and forgets it here. */
export async function signOut() {
  const session = JSON.parse(sessionStorage.getItem(KEY) || "null");
  sessionStorage.removeItem(KEY);
  if (session?.access) {
    await fetch("/oauth/revoke", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: CLIENT_ID, token: session.access }),
    }).catch(() => {});
  }
}
