// The coachd HTTP API as the UI uses it. Every call sends the user's key;
// every failure is an ApiError carrying the API's error code.

export class ApiError extends Error {
  constructor(status, code, message, retryAfter = 0, details = []) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code || 'internal';
    this.retryAfter = retryAfter; // seconds
    this.details = details;
  }
}

// errorFrom reads the API's error body {"error":{code,message,details}}.
// On the stream endpoint the error is an SSE error event {type, message,
// details, retry_after, …} with the same HTTP status.
async function errorFrom(res) {
  let e = {};
  try {
    if ((res.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      const data = (await res.text()).split('\n').find((l) => l.startsWith('data: '));
      const ev = data ? JSON.parse(data.slice(6)) : {};
      e = { code: ev.type, message: ev.message, details: ev.details, remaining: ev.remaining, estimated_tokens: ev.estimated_tokens };
    } else {
      const body = await res.json();
      e = body && body.error ? body.error : {};
    }
  } catch {
    // not JSON: a proxy's page, an empty body
  }
  const retry = Number(res.headers.get('Retry-After')) || 0;
  const code = e.code || codeForStatus(res.status);
  const err = new ApiError(res.status, code, e.message || res.statusText, retry, e.details || []);
  // budget_exhausted says what is left and what the turn needs.
  err.remaining = e.remaining;
  err.estimated_tokens = e.estimated_tokens;
  return err;
}

function codeForStatus(status) {
  switch (status) {
    case 401: return 'unauthorized';
    case 402: return 'budget_exhausted';
    case 404: return 'not_found';
    case 409: return 'conflict';
    case 429: return 'rate_limit_exceeded';
    case 503: return 'rate_limit';
    case 504: return 'timeout';
    default: return status >= 500 ? 'internal' : 'invalid_request';
  }
}

// takeKeyFromURL stores under storageKey a key passed as #key=ck_… (the
// URL `coachd serve --demo` prints) and reports whether there was one.
export function takeKeyFromURL(storageKey) {
  const m = location.hash.match(/^#key=(ck_[A-Za-z0-9_-]+)$/);
  if (!m) return false;
  localStorage.setItem(storageKey, m[1]);
  // The key must not stay in the address bar, the history or a bookmark.
  history.replaceState(null, '', location.pathname + location.search);
  return true;
}

// The Idempotency-Key each request was last sent with, and its JSON.
const chatKeys = new WeakMap();

// chatKey is the Idempotency-Key to send request's body json with: the
// one it was sent with before when that was this very JSON and its
// answer never came (chatAnswered), a new one otherwise. The server
// refuses a key sent again with another body (409), and a new request,
// even of the same words, is a new turn.
export function chatKey(request, json) {
  const k = chatKeys.get(request);
  if (k && k.json === json) return k.key;
  const key = newKey();
  chatKeys.set(request, { json, key });
  return key;
}

// chatAnswered forgets request's key once the server has answered it:
// the turn it started was seen, and sent again (Retry of a reply that
// failed) the request is for a new turn, not that one's replay.
export function chatAnswered(request) {
  chatKeys.delete(request);
}

// newKey is a random UUID. crypto.randomUUID exists in secure contexts
// only; a UI served over plain HTTP on a LAN address makes its own.
export function newKey(c = crypto) {
  if (typeof c.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export class Api {
  constructor(key, base = '') {
    this.key = key;
    this.base = base;
  }

  headers(json) {
    const h = { Authorization: `Bearer ${this.key}` };
    if (json) h['Content-Type'] = 'application/json';
    return h;
  }

  // request sends one call; extra holds more headers (an Idempotency-Key).
  async request(method, path, body, extra = undefined) {
    let res;
    try {
      res = await fetch(this.base + path, {
        method,
        headers: { ...this.headers(body !== undefined), ...extra },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(0, 'network', 'Could not reach coachd. Check your connection.');
    }
    if (!res.ok) throw await errorFrom(res);
    if (res.status === 204) return null;
    return res.json();
  }

  me() { return this.request('GET', '/v1/me'); }
  agents() { return this.request('GET', '/v1/agents'); }

  // sessions reads the newest count sessions (by creation), a page of
  // at most 200 at a time; more says whether older ones are left.
  async sessions(count = 50) {
    const sessions = [];
    let cursor = '';
    do {
      const q = `limit=${Math.min(200, count - sessions.length)}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await this.request('GET', `/v1/sessions?${q}`);
      sessions.push(...(page.sessions || []));
      cursor = page.next_cursor || '';
    } while (cursor && sessions.length < count);
    return { sessions, more: Boolean(cursor) };
  }
  session(id) { return this.request('GET', `/v1/sessions/${encodeURIComponent(id)}`); }
  // messagesBefore reads the page of a session's messages just before
  // before ('end': its last page), oldest first; prev is the cursor of the
  // page before it, '' at the start of the conversation.
  async messagesBefore(id, before = 'end', limit = 100) {
    const q = `before=${encodeURIComponent(before)}&limit=${limit}`;
    const page = await this.request('GET', `/v1/sessions/${encodeURIComponent(id)}/messages?${q}`);
    return { messages: page.messages || [], prev: page.prev_cursor || '' };
  }

  // notes reads every page: a user may have up to 1,000 live notes, and
  // the deleted ones come too.
  async notes() {
    const notes = [];
    let cursor = '';
    do {
      const q = `include_deleted=true&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await this.request('GET', `/v1/notes?${q}`);
      notes.push(...(page.notes || []));
      cursor = page.next_cursor || '';
    } while (cursor);
    return { notes };
  }
  createNote(note) { return this.request('POST', '/v1/notes', note); }
  updateNote(id, fields) { return this.request('PUT', `/v1/notes/${encodeURIComponent(id)}`, fields); }
  deleteNote(id) { return this.request('DELETE', `/v1/notes/${encodeURIComponent(id)}`); }
  pinNote(id) { return this.request('POST', `/v1/notes/${encodeURIComponent(id)}/pin`); }
  restoreNote(id) { return this.request('POST', `/v1/notes/${encodeURIComponent(id)}/restore`); }
  deleteUpload(id) { return this.request('DELETE', `/v1/uploads/${encodeURIComponent(id)}`); }

  // chatStream starts a turn and returns the streaming Response; errors
  // before the stream (402, 409, 429, …) throw ApiError. The turn goes on
  // on the server if the connection drops (resume picks it up); stop()
  // ends it. of is the UI's request (a message, an answer) that body
  // sends: sent again (Retry) with the same JSON, it carries the same
  // Idempotency-Key, and a turn the server took before its answer was
  // lost is replayed instead of run twice.
  async chatStream(body, signal, of = body) {
    const json = JSON.stringify(body);
    const res = await fetch(`${this.base}/v1/chat/stream?protocol=coachd`, {
      method: 'POST',
      headers: { ...this.headers(true), Accept: 'text/event-stream', 'Idempotency-Key': chatKey(of, json) },
      body: json,
      signal,
    });
    if (res.ok) chatAnswered(of);
    if (!res.ok) throw await errorFrom(res);
    return res;
  }

  // resume follows the session's stream after the event lastId (its
  // Last-Event-ID), for a turn whose stream was cut.
  async resume(sessionId, lastId, signal) {
    const res = await fetch(`${this.base}/v1/sessions/${encodeURIComponent(sessionId)}/stream?protocol=coachd`, {
      headers: { ...this.headers(false), Accept: 'text/event-stream', 'Last-Event-ID': lastId },
      signal,
    });
    if (!res.ok) throw await errorFrom(res);
    return res;
  }

  // stopTurn stops the session's running turn, wherever it runs.
  stopTurn(sessionId) { return this.request('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/stop`); }
}
