// Following one turn's stream to its end, across dropped connections: the
// turn goes on on the server when the browser's connection drops, and the
// session stream picks it up again after the last event seen.

import { ApiError } from './api.js';
import { readEvents } from './stream.js';

// RECONNECTS bounds how many times a cut stream is picked up again.
export const RECONNECTS = 6;

function sleep(ms, signal) {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(t); resolve(); }, { once: true });
  });
}

// followTurn reads the turn's stream res. handle(event, data) is called
// for every event and returns true at the turn's end (message_end, error),
// or {resumeAfter: id, retryAfter: seconds} when the server ends the
// stream but not the turn (server_shutdown, unavailable): the stream is
// picked up again after id, no sooner than retryAfter. When the connection drops before the end,
// resume(lastId) opens the stream again after the last event seen
// (firstId before any), while canResume() holds, up to RECONNECTS times; reconnecting(on) shows it. A refused
// resume throws its ApiError; a stream that ended before the turn did
// throws a TypeError. When the turn may still be followed later (the
// connection, or the server, was lost), the error carries resumeAfter,
// the last event id seen: the turn goes on on the server, so a retry
// follows it again instead of sending its message a second time.
export async function followTurn(res, firstId, opts) {
  const at = { lastId: firstId };
  try {
    await follow(res, at, opts);
  } catch (err) {
    const lost = !(err instanceof ApiError) || err.status === 0 || err.status >= 500;
    if (!opts.signal.aborted && at.lastId && lost) err.resumeAfter = at.lastId;
    throw err;
  }
}

async function follow(res, at, { handle, resume, canResume, reconnecting, signal }) {
  let ended = false;
  let wait = 0; // ms the server asked to wait before the next resume
  const consume = async (r) => {
    wait = 0;
    try {
      for await (const { event, data, id } of readEvents(r.body)) {
        if (id) at.lastId = id;
        const end = handle(event, data);
        if (end && end.resumeAfter !== undefined) {
          if (end.resumeAfter) at.lastId = end.resumeAfter;
          wait = (end.retryAfter || 0) * 1000;
          return;
        }
        if (end) {
          ended = true;
          return;
        }
      }
    } catch (err) {
      if (signal.aborted || err instanceof ApiError) throw err;
    }
  };
  await consume(res);
  for (let n = 0; !ended && !signal.aborted && at.lastId && canResume() && n < RECONNECTS; n++) {
    reconnecting(true);
    await sleep(Math.max(wait, Math.min(250 * 2 ** n, 4000)), signal);
    if (signal.aborted) break;
    try {
      await consume(await resume(at.lastId));
    } catch (err) {
      if (signal.aborted || (err instanceof ApiError && err.status !== 0)) throw err;
    }
  }
  reconnecting(false);
  if (!ended && !signal.aborted) {
    throw new TypeError('the stream ended before the turn did');
  }
}

// askAgain sends a turn's request with send() and, when its answer is
// lost on the network (not refused by the server) while again() holds,
// sends it again, up to RECONNECTS times; reconnecting(on) shows it.
// Sent again with its Idempotency-Key, the request is answered with the
// turn it began, if the server took it: Stop pressed before the answer
// came stops that turn, instead of leaving it running unseen.
export async function askAgain(send, { signal, again, reconnecting }) {
  let shown = false;
  try {
    for (let n = 0; ; n++) {
      try {
        return await send();
      } catch (err) {
        if (err instanceof ApiError || signal.aborted || !again() || n >= RECONNECTS) throw err;
      }
      shown = true;
      reconnecting(true);
      await sleep(Math.min(250 * 2 ** n, 4000), signal);
    }
  } finally {
    if (shown) reconnecting(false);
  }
}
