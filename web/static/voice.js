// Voice: a microphone button that talks to the coach through the voice
// provider's realtime API. coachd mints a short-lived secret (the
// provider key never reaches the browser); the browser opens a WebRTC
// call to the provider with it, and posts each finished transcript back
// to the session so that the text coach sees the conversation.

import { toast } from './ui.js';

const SVG = 'http://www.w3.org/2000/svg';
const MIC = 'M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.92V21h2v-3.08A7 7 0 0 0 19 11h-2z';

function micIcon() {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', 'icon');
  svg.setAttribute('aria-hidden', 'true');
  const p = document.createElementNS(SVG, 'path');
  p.setAttribute('d', MIC);
  svg.append(p);
  return svg;
}

// transcriptOf returns [role, text] for a provider event that finishes a
// transcript, or null. Both the GA and the older event names are read.
export function transcriptOf(ev) {
  switch (ev && ev.type) {
    case 'conversation.item.input_audio_transcription.completed':
      return ['user', ev.transcript];
    case 'response.output_audio_transcript.done':
    case 'response.audio_transcript.done':
      return ['assistant', ev.transcript];
  }
  return null;
}

// TRANSCRIPT_TRIES bounds the tries of one transcript post: with their
// pauses, about as long as a turn may run.
const TRANSCRIPT_TRIES = 8;

// retryable says whether a failed transcript post may pass if sent again:
// the network, a turn running on the session, the user's transcript rate,
// a server briefly down. Anything else (the session ended or is gone, a
// refused line) would fail the same way.
function retryable(err) {
  const status = err.status || 0;
  return status === 0 || status === 429 || status >= 500 || (status === 409 && err.code === 'turn_in_progress');
}

// INVISIBLE matches a line with nothing a reader sees: spaces, control
// and format characters (zero-width spaces and joiners, the BOM, bidi
// marks), combining marks with nothing to sit on, Hangul fillers. The
// server refuses such a line as empty (coachd.Blank), so it is not sent.
const INVISIBLE = /^[\s\p{Cc}\p{Cf}\p{Mn}\p{Me}\p{Z}\p{Default_Ignorable_Code_Point}]*$/u;

// MAX_LINE is the longest transcript the server takes, in characters
// (code points).
const MAX_LINE = 32000;

// cut keeps the first n characters of text, never half of one: a
// surrogate pair cut in two is not UTF-8, and the server refuses it.
function cut(text, n) {
  return text.length <= n ? text : Array.from(text).slice(0, n).join('');
}

// The provider transcribes the driver's speech apart from the coach's
// reply to it ("transcription runs asynchronously with Response
// creation"), so the driver's line may come after the reply. Posted as
// they came, the session, and the next turn's history, would read the
// answer before the question. The provider gives the conversation's
// order as it adds each item (input_audio_buffer.committed and
// conversation.item.added, after previous_item_id), so a line is held
// until every item spoken before it is settled: its transcript came, its
// transcription failed, its response ended, it was deleted, or HOLD_MS
// passed (a transcript lost on the way holds up nothing for long). At
// most MAX_HELD items are held; a line whose event names no item is
// posted after those held.
const HOLD_MS = 15000;
const MAX_HELD = 64;

// lineKey is a new transcript line's Idempotency-Key.
function lineKey() {
  if (globalThis.crypto && crypto.randomUUID) return `voice-${crypto.randomUUID()}`;
  return `voice-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

// hangUp releases what a call holds so far: the microphone, the
// connection, the speaker.
function hangUp(call) {
  if (call.stream) call.stream.getTracks().forEach((t) => t.stop());
  if (call.pc) call.pc.close();
  if (call.audio) call.audio.srcObject = null;
}

export class VoiceButton {
  // hooks: sessionId() → the open session ('' for none), adopt(id) when
  // a new session was made for the call, stored(id) after a transcript
  // is stored, error(err) for anything to show (a toast by default).
  constructor(button, hooks) {
    this.button = button;
    this.hooks = hooks;
    this.api = null;
    this.call = null; // {pc, stream, audio, sessionId}, from the first tap
    this.posting = Promise.resolve(); // the transcripts being stored, in order
    this.gone = ''; // the session that refused the call's lines
    button.hidden = true;
    button.append(micIcon());
    button.addEventListener('click', () => (this.call ? this.stop() : this.start()));
  }

  // setup asks the server whether voice is configured; the button shows
  // only when it is.
  async setup(api) {
    this.api = api;
    this.stop();
    let info = { enabled: false };
    try {
      info = await api.request('GET', '/v1/voice');
    } catch {
      // an older server without voice: no button
    }
    this.button.hidden = !info.enabled;
    document.body.dataset.voice = info.enabled ? 'on' : 'off';
  }

  // start sets up a call. The call is the button's from the first tap, so
  // that a tap while it is still being set up (a secret being minted, the
  // browser asking for the microphone) ends it; after each wait it goes
  // on only while it is still the button's, and what it got meanwhile (a
  // microphone allowed after the stop) is released.
  async start() {
    const call = { pc: null, stream: null, audio: null, sessionId: '' };
    this.call = call;
    this.setState('connecting');
    const ours = () => this.call === call;
    try {
      const sid = this.hooks.sessionId();
      const minted = await this.api.request('POST', '/v1/realtime/session', sid ? { session_id: sid } : {});
      if (!ours()) return;
      if (minted.session_id !== sid) this.hooks.adopt(minted.session_id);
      call.sessionId = minted.session_id;
      call.pc = new RTCPeerConnection();
      call.audio = new Audio();
      call.audio.autoplay = true;
      call.pc.ontrack = (e) => { call.audio.srcObject = e.streams[0]; };
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      if (!ours()) {
        hangUp({ stream });
        return;
      }
      call.stream = stream;
      call.stream.getTracks().forEach((t) => call.pc.addTrack(t, call.stream));
      const events = call.pc.createDataChannel('oai-events');
      events.onmessage = (e) => this.onEvent(call, e.data);
      // A call that drops (signal lost, the provider hung up) ends here:
      // the microphone is released and the driver told, not left live.
      const dropped = () => {
        if (!ours()) return;
        this.stop();
        this.error(new Error('The voice call dropped; tap the microphone to talk again.'));
      };
      call.pc.onconnectionstatechange = () => {
        if (call.pc.connectionState === 'failed' || call.pc.connectionState === 'closed') dropped();
      };
      events.onclose = () => { if (this.button.dataset.state === 'live') dropped(); };
      const offer = await call.pc.createOffer();
      await call.pc.setLocalDescription(offer);
      const res = await fetch(minted.connect_url, {
        method: 'POST',
        body: offer.sdp,
        headers: { Authorization: `Bearer ${minted.client_secret.value}`, 'Content-Type': 'application/sdp' },
      });
      if (!res.ok) throw new Error(`The voice provider refused the call (HTTP ${res.status}).`);
      await call.pc.setRemoteDescription({ type: 'answer', sdp: await res.text() });
      if (ours()) this.setState('live');
    } catch (err) {
      // A call stopped meanwhile was hung up by stop; its failure is moot.
      if (ours()) {
        this.stop();
        this.error(err);
      }
    }
  }

  // onEvent follows the order of the call's items and queues each
  // finished transcript behind the lines spoken before it, so that the
  // session stores them in the order they were spoken.
  onEvent(call, data) {
    let ev;
    try { ev = JSON.parse(data); } catch { return this.posting; }
    if (!ev || typeof ev !== 'object') return this.posting;
    switch (ev.type) {
      case 'input_audio_buffer.committed':
        this.place(call, ev.item_id, ev.previous_item_id, true);
        break;
      case 'conversation.item.added':
      case 'conversation.item.created': {
        const item = ev.item || {};
        if (item.type === 'message' && (item.role === 'user' || item.role === 'assistant')) {
          // A typed user item has no transcript to wait for.
          const spoken = item.role === 'assistant' || (Array.isArray(item.content) && item.content.some((c) => c && c.type === 'input_audio'));
          this.place(call, item.id, ev.previous_item_id, spoken);
        }
        break;
      }
      case 'conversation.item.input_audio_transcription.failed':
      case 'conversation.item.deleted':
        this.settle(call, ev.item_id);
        break;
      case 'response.done':
        for (const o of (ev.response && Array.isArray(ev.response.output) && ev.response.output) || []) this.settle(call, o && o.id);
        break;
    }
    const t = transcriptOf(ev);
    if (t) {
      if (typeof t[1] !== 'string' || INVISIBLE.test(t[1])) {
        this.settle(call, ev.item_id);
      } else {
        const it = this.place(call, ev.item_id, null, false);
        it.waiting = false;
        it.lines.push({
          api: this.api, sessionId: call.sessionId, key: lineKey(),
          body: { role: t[0], content: cut(t[1].trim(), MAX_LINE), source: 'voice' },
        });
      }
    }
    return this.flush(call);
  }

  // place returns the call's held item id, putting it after the held
  // item previous (else last) when it is not held yet; waiting says a
  // transcript of it is to come.
  place(call, id, previous, waiting) {
    if (!call.items) call.items = [];
    const items = call.items;
    const find = (x) => (typeof x === 'string' && x !== '' ? items.find((it) => it.id === x) : null);
    const held = find(id);
    if (held) return held;
    const it = { id, lines: [], waiting };
    const after = find(previous);
    items.splice(after ? items.indexOf(after) + 1 : items.length, 0, it);
    if (waiting) {
      setTimeout(() => {
        it.waiting = false;
        this.flush(call);
      }, HOLD_MS);
    }
    return it;
  }

  // settle says no transcript of the held item id is to come.
  settle(call, id) {
    const it = call.items && typeof id === 'string' && id !== '' ? call.items.find((x) => x.id === id) : null;
    if (it) it.waiting = false;
  }

  // flush queues the lines of the call's items from the first on, while
  // no earlier item waits for its transcript.
  flush(call) {
    const items = call.items || [];
    while (items.length > 0 && (!items[0].waiting || items.length > MAX_HELD)) {
      for (const line of items.shift().lines) {
        this.posting = this.posting.then(() => this.post(line));
      }
    }
    return this.posting;
  }

  // post stores one line, trying again while the failure may pass, with
  // the line's own Idempotency-Key: a try whose answer was lost on the
  // way back was stored, and its retry is answered without storing it
  // again.
  async post(line) {
    const path = `/v1/sessions/${encodeURIComponent(line.sessionId)}/messages`;
    for (let tries = 1; ; tries++) {
      try {
        await line.api.request('POST', path, line.body, { 'Idempotency-Key': line.key });
        if (this.api === line.api) this.hooks.stored(line.sessionId);
        return;
      } catch (err) {
        if (this.api !== line.api) return; // signed out: not this page's to show
        if (tries >= TRANSCRIPT_TRIES || !retryable(err)) {
          this.refused(line, err);
          return;
        }
        const wait = err.retryAfter > 0 ? Math.min(err.retryAfter, 60) * 1000 : Math.min(500 * 2 ** (tries - 1), 10000);
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  // refused shows why a line was not stored. A session that takes no
  // more of the call's lines (deleted: 404; ended, or waiting for an
  // answer: 409) ends the call, once: what the driver says next would be
  // lost too. A turn that outran the retries does not.
  refused(line, err) {
    if (err.status !== 404 && (err.status !== 409 || err.code === 'turn_in_progress')) {
      this.error(err);
      return;
    }
    if (this.gone === line.sessionId) return; // told already
    this.gone = line.sessionId;
    if (this.call && this.call.sessionId === line.sessionId) this.stop();
    this.error(new Error(`This conversation takes no more of the call (${err.message}); the call ended. Tap the microphone to talk again.`));
  }

  error(err) {
    if (this.hooks.error) this.hooks.error(err);
    else toast(err.message || String(err), 'error');
  }

  stop() {
    const call = this.call;
    this.call = null;
    if (call) {
      hangUp(call);
      // No transcript comes after the call: what it holds is posted now.
      for (const it of call.items || []) it.waiting = false;
      this.flush(call);
    }
    this.setState('idle');
  }

  setState(state) {
    this.button.dataset.state = state;
    this.button.setAttribute('aria-pressed', state === 'idle' ? 'false' : 'true');
    this.button.title = state === 'idle' ? 'Talk to your coach' : 'End the voice conversation';
  }
}
