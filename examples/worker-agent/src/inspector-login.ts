/**
 * A login a browser can use for the inspector: a form that takes the `INSPECTOR_TOKEN` once and answers
 * with a cookie (`HttpOnly`, `Secure`, `SameSite=Strict`, scoped to the inspector's path), so the page, its
 * JSON and its live events (an `EventSource` cannot send an `Authorization` header) are read with the
 * cookie. Scripts and `curl` can still send `Authorization: Bearer <token>`.
 */

export const INSPECTOR_COOKIE = "contextblocks_inspector";
const EIGHT_HOURS = 8 * 60 * 60;

/** `authorize` for `createInspector`: the token as a bearer header or the login's cookie; else the login page. */
export function authorizeInspector(request: Request, token: string, basePath: string): "read" | Response {
  if (token !== "" && presentsToken(request, token)) return "read";
  // A browser asking for the page is sent to the login; anything else (JSON, events) gets a plain 401.
  const wantsPage = request.method === "GET" && (request.headers.get("accept") ?? "").includes("text/html");
  if (wantsPage) return redirect(`${basePath}/login`);
  return new Response("Unauthorized", { status: 401, headers: { "www-authenticate": "Bearer" } });
}

/** `GET <base>/login`: the form. `POST <base>/login`: checks the token, sets the cookie, back to the page. */
export async function inspectorLogin(request: Request, token: string, basePath: string): Promise<Response> {
  if (request.method === "GET") return loginPage(basePath, 200);
  if (request.method !== "POST")
    return new Response("Method not allowed", { status: 405, headers: { allow: "GET, POST" } });
  const form = await request.formData().catch(() => null);
  const given = form?.get("token");
  if (token === "" || typeof given !== "string" || !sameText(given, token)) return loginPage(basePath, 401);
  const cookie = `${INSPECTOR_COOKIE}=${encodeURIComponent(token)}; Path=${basePath}; Max-Age=${EIGHT_HOURS}; HttpOnly; Secure; SameSite=Strict`;
  return redirect(`${basePath}/`, cookie);
}

function presentsToken(request: Request, token: string): boolean {
  const header = request.headers.get("authorization");
  if (header !== null && sameText(header, `Bearer ${token}`)) return true;
  for (const cookie of (request.headers.get("cookie") ?? "").split(";")) {
    const [name, ...value] = cookie.trim().split("=");
    if (name === INSPECTOR_COOKIE && sameText(safeDecode(value.join("=")), token)) return true;
  }
  return false;
}

/** Compares in time that depends on the length only, so the token cannot be guessed a character at a time. */
function sameText(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false;
  let difference = 0;
  for (let index = 0; index < given.length; index++) {
    difference |= given.charCodeAt(index) ^ expected.charCodeAt(index);
  }
  return difference === 0;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return "";
  }
}

function redirect(location: string, cookie?: string): Response {
  const headers = new Headers({ location, "cache-control": "no-store" });
  if (cookie !== undefined) headers.set("set-cookie", cookie);
  return new Response(null, { status: 303, headers });
}

function loginPage(basePath: string, status: 200 | 401): Response {
  const refused = status === 401 ? '<p role="alert">That token is not the inspector token.</p>' : "";
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Inspector login</title></head>
<body style="font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 4rem auto; padding: 0 1rem">
<h1>Inspector login</h1>${refused}
<form method="post" action="${basePath}/login">
<label for="token">Inspector token</label><br>
<input id="token" name="token" type="password" autocomplete="current-password" required style="width: 100%; font: inherit">
<button type="submit" style="margin-top: .8rem; font: inherit">Open the inspector</button>
</form></body></html>`;
  return new Response(html, {
    status,
    headers: {
      "content-type": "text/html; charset=utf-8",
      "cache-control": "no-store",
      "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'",
    },
  });
}
