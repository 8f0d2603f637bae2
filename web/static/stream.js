// Streaming primitives, free of DOM code so they can be tested alone:
// an SSE frame parser, a reader over a fetch body, the 4-state stream phase
// machine with its tool-activity shimmer, and a requestAnimationFrame text
// batcher.

// SSEParser turns text chunks into events, following the WHATWG
// EventSource rules: lines end in \n, \r\n or \r (a chunk may split any of
// them), "field: value" with one optional space after the colon, lines
// starting with ":" are comments (heartbeats), several data lines join with
// "\n", and a blank line dispatches the event. An event with no data is
// dropped; an event with no name is "message".
export class SSEParser {
  constructor() {
    this.buf = '';
    this.pendingCR = false;
    this.reset();
    this.comments = 0;
  }

  reset() {
    this.event = '';
    this.data = [];
    this.id = '';
  }

  // push feeds a chunk and returns the events it completed.
  push(chunk) {
    const out = [];
    let text = chunk;
    if (this.pendingCR) {
      // The previous chunk ended in \r: a \n here belongs to it.
      this.pendingCR = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    this.buf += text;
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line(this.buf.slice(start, i), out);
      if (c === '\r') {
        if (i + 1 === this.buf.length) this.pendingCR = true;
        else if (this.buf[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  // end flushes a final event that was not followed by a blank line; the
  // spec drops it, but a server that closes right after its last data line
  // has still said what it meant.
  end() {
    const out = [];
    if (this.buf !== '') this.line(this.buf, out);
    this.buf = '';
    this.line('', out);
    return out;
  }

  line(line, out) {
    if (line === '') {
      if (this.data.length > 0) {
        out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      }
      this.reset();
      return;
    }
    if (line.startsWith(':')) {
      this.comments++;
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event': this.event = value; break;
      case 'data': this.data.push(value); break;
      case 'id': this.id = value; break;
      default: // retry and unknown fields are ignored
    }
  }
}

// readEvents yields {event, data, id} from a fetch Response body, decoding
// UTF-8 across chunk boundaries. JSON data is parsed; a frame whose data
// is not JSON is yielded with data as the raw string. A reader that stops
// early (a turn's end on a session stream, which goes on to the next
// turn) cancels the body, which closes the connection; releasing the
// lock alone would leave it open for good.
export async function* readEvents(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = new SSEParser();
  let finished = false;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      const frames = done
        ? parser.push(decoder.decode()).concat(parser.end())
        : parser.push(decoder.decode(value, { stream: true }));
      for (const f of frames) yield { event: f.event, data: parseData(f.data), id: f.id };
      if (done) {
        finished = true;
        return;
      }
    }
  } finally {
    if (!finished) reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function parseData(s) {
  try {
    return JSON.parse(s);
  } catch {
    return s;
  }
}

// Phases of one turn. The send button depends on the phase, never on a
// single isStreaming flag: a turn always ends back in idle, whatever way it
// ends (message_end, error, abort, dropped connection).
export const Phase = Object.freeze({
  idle: 'idle',
  streaming: 'streaming',
  toolExecuting: 'toolExecuting',
  completing: 'completing',
});

// MIN_SHIMMER_MS keeps the tool-activity shimmer up long enough to read,
// so a fast tool does not flash.
export const MIN_SHIMMER_MS = 200;

// StreamPhase is the phase machine of one chat view. Tools are counted,
// not flagged: with parallel tools the shimmer stays on until the last one
// ends. onChange(state) is called after every change with
// {phase, shimmer, tools, toolName}.
export class StreamPhase {
  constructor(onChange = () => {}, clock = { now: () => performance.now(), setTimeout: (f, ms) => setTimeout(f, ms), clearTimeout: (t) => clearTimeout(t) }) {
    this.onChange = onChange;
    this.clock = clock;
    this.phase = Phase.idle;
    this.running = new Map(); // tool_use_id → name
    this.shimmer = false;
    this.shimmerSince = 0;
    this.hideTimer = null;
    this.toolName = '';
  }

  get tools() { return this.running.size; }

  // begin starts a turn; it returns false when one is already running.
  begin() {
    if (this.phase !== Phase.idle) return false;
    this.phase = Phase.streaming;
    this.emit();
    return true;
  }

  toolStarted(id, name) {
    if (this.phase === Phase.idle || this.phase === Phase.completing) return;
    this.running.set(id || `anon-${this.running.size}`, name || 'tool');
    this.toolName = name || this.toolName;
    this.phase = Phase.toolExecuting;
    const shown = this.showShimmer();
    this.emit();
    // The hold counts from when onChange drew the shimmer: on a busy page
    // the thread can be taken away between the decision and the drawing.
    if (shown) this.shimmerSince = this.clock.now();
  }

  toolFinished(id) {
    if (!this.running.delete(id) && this.running.size > 0) {
      // An unknown id still means one tool less.
      this.running.delete(this.running.keys().next().value);
    }
    if (this.running.size === 0 && this.phase === Phase.toolExecuting) {
      this.phase = Phase.streaming;
      this.hideShimmer();
    }
    this.emit();
  }

  // roundBoundary ends a round: every tool of it has a result by now.
  roundBoundary() {
    if (this.phase === Phase.idle || this.phase === Phase.completing) return;
    this.running.clear();
    this.phase = Phase.streaming;
    this.hideShimmer();
    this.emit();
  }

  // text notes a text delta: the model is writing, so no tool is running.
  text() {
    if (this.phase === Phase.toolExecuting && this.running.size === 0) {
      this.phase = Phase.streaming;
      this.emit();
    }
  }

  // complete enters completing (message_end, or the body ended); finish
  // returns to idle once the view has settled.
  complete() {
    if (this.phase === Phase.idle) return;
    this.phase = Phase.completing;
    this.running.clear();
    this.hideShimmer();
    this.emit();
  }

  finish() {
    this.running.clear();
    this.phase = Phase.idle;
    this.hideShimmer();
    this.emit();
  }

  // showShimmer turns the shimmer on, or keeps it on; it reports whether
  // it was off.
  showShimmer() {
    if (this.hideTimer !== null) {
      this.clock.clearTimeout(this.hideTimer);
      this.hideTimer = null;
    }
    if (this.shimmer) return false;
    this.shimmer = true;
    return true;
  }

  hideShimmer() {
    if (!this.shimmer || this.hideTimer !== null) return;
    const left = MIN_SHIMMER_MS - (this.clock.now() - this.shimmerSince);
    if (left <= 0) {
      this.shimmer = false;
      return;
    }
    this.hideTimer = this.clock.setTimeout(() => {
      this.hideTimer = null;
      if (this.running.size === 0) {
        this.shimmer = false;
        this.emit();
      }
    }, left);
  }

  emit() {
    this.onChange({ phase: this.phase, shimmer: this.shimmer, tools: this.running.size, toolName: this.toolName });
  }
}

// TextBatcher collects text deltas and hands them over at most once per
// animation frame, so a fast stream costs one DOM update per frame, not one
// per token.
export class TextBatcher {
  constructor(flush, raf = (f) => requestAnimationFrame(f)) {
    this.flushFn = flush;
    this.raf = raf;
    this.pending = '';
    this.scheduled = false;
  }

  push(text) {
    if (!text) return;
    this.pending += text;
    if (this.scheduled) return;
    this.scheduled = true;
    this.raf(() => this.flush());
  }

  // flush hands over whatever is pending now (also used at the end of a
  // turn, so no text waits for a frame that never comes).
  flush() {
    this.scheduled = false;
    if (this.pending === '') return;
    const text = this.pending;
    this.pending = '';
    this.flushFn(text);
  }
}
