// The transcript: user bubbles and assistant turns built from content
// blocks, for stored history and for a reply streaming in.

import { renderSafe } from './markdown.js';
import { h, icon, humanize } from './ui.js';
import { isInteractive, renderInteraction, answerLabel, NOT_OPEN } from './interactions.js';
import { attachmentView, userBubble } from './attach.js';

// AssistantView is one assistant turn on screen: text segments, collapsed
// thinking and tool cards in the order they happened.
export class AssistantView {
  constructor(transcript) {
    this.transcript = transcript;
    this.body = h('div', { class: 'msg-body' });
    this.el = h('article', { class: 'msg assistant' },
      h('div', { class: 'avatar', 'aria-hidden': 'true' }, icon('spark')),
      this.body);
    this.seg = null; // the text segment being written
    this.segText = '';
    this.needBreak = false;
    this.think = null;
    this.activity = null;
    this.typing = null;
  }

  // text appends text to the current segment and re-renders it as Markdown
  // (a segment is one round of prose: small enough to redo per frame).
  text(t) {
    if (!t) return;
    this.hideTyping();
    this.think = null;
    if (!this.seg) {
      this.seg = h('div', { class: 'md' });
      this.insert(this.seg);
      this.segText = '';
      this.needBreak = false;
    }
    if (this.needBreak && this.segText !== '' && !this.segText.endsWith('\n\n')) {
      this.segText = this.segText.replace(/\n?$/, '\n\n');
    }
    this.needBreak = false;
    this.segText += t;
    this.seg.replaceChildren(renderSafe(this.segText));
    this.transcript.stick();
  }

  thinking(t) {
    this.hideTyping();
    if (!this.think) {
      this.seg = null;
      this.thinkText = h('div', { class: 'thinking-text' });
      this.think = h('details', { class: 'thinking' },
        h('summary', {}, h('span', { class: 'thinking-label' }, 'Thought process')),
        this.thinkText);
      this.insert(this.think);
    }
    this.thinkText.textContent += t;
  }

  // roundBreak starts a new paragraph at a round boundary, so the text of
  // the next round never runs into the last word of this one.
  roundBreak() {
    this.needBreak = true;
    this.think = null;
  }

  // toolCall adds a compact card for a tool the model called.
  toolCall(id, name, input) {
    this.hideTyping();
    this.seg = null;
    this.think = null;
    if (this.transcript.cards.has(id)) return this.transcript.cards.get(id);
    const status = h('span', { class: 'tool-status' }, 'Running…');
    const detail = h('div', { class: 'tool-detail' });
    const card = h('details', { class: 'tool-card', dataset: { state: 'running', tool: name || '', id: id || '' } },
      h('summary', {}, icon('tool', 'icon tool-icon'), h('span', { class: 'tool-name' }, humanize(name)), status),
      detail);
    if (input && Object.keys(input).length > 0) {
      detail.append(h('div', { class: 'tool-label' }, 'Input'), h('pre', { class: 'tool-pre' }, JSON.stringify(input, null, 2)));
    }
    this.insert(card);
    const c = { card, status, detail };
    if (id) this.transcript.cards.set(id, c);
    this.transcript.stick();
    return c;
  }

  interaction(data, opts) {
    this.hideTyping();
    this.seg = null;
    const el = renderInteraction(data, opts);
    this.insert(el);
    this.transcript.stick();
    return el;
  }

  // setActivity shows or hides the tool-activity shimmer.
  setActivity(on, label) {
    if (on) {
      this.hideTyping();
      if (!this.activity) {
        this.activity = h('div', { class: 'activity', role: 'status' }, h('span', { class: 'shimmer' }));
        this.body.append(this.activity);
      }
      this.activity.firstChild.textContent = label;
      this.transcript.stick();
    } else if (this.activity) {
      this.activity.remove();
      this.activity = null;
    }
  }

  // showTyping shows the dots until the reply's first words. A status
  // carries their label to a screen reader; the reply itself is not in
  // it, so its frames are not announced one by one.
  showTyping() {
    if (this.typing) return;
    this.typing = h('div', { class: 'typing', role: 'status', 'aria-label': 'Coach is replying' }, h('i'), h('i'), h('i'));
    this.body.append(this.typing);
  }

  hideTyping() {
    if (this.typing) this.typing.remove();
    this.typing = null;
  }

  // reconnecting shows or hides the state of a stream being picked up
  // again after its connection dropped.
  reconnecting(on) {
    if (on && !this.reconnect) {
      this.reconnect = h('div', { class: 'msg-note reconnecting', role: 'status' }, 'Reconnecting…');
      this.body.append(this.reconnect);
      this.transcript.stick();
    } else if (!on && this.reconnect) {
      this.reconnect.remove();
      this.reconnect = null;
    }
  }

  // note ends the reply with why it ended early: in view, as its last
  // line was, unless the reader scrolled up.
  note(text, cls = '') {
    this.body.append(h('div', { class: `msg-note ${cls}` }, text));
    this.transcript.stick();
  }

  // finish ends a live turn: no indicator stays behind, and a turn that
  // produced nothing visible leaves no empty bubble.
  finish() {
    this.hideTyping();
    this.setActivity(false);
    this.reconnecting(false);
    // A call whose result never came (the turn was stopped, or its
    // stream lost) is not running any more; a result followed again
    // later still fills its card.
    this.body.querySelectorAll('.tool-card[data-state="running"]').forEach((card) => {
      card.dataset.state = 'stopped';
      card.querySelector('.tool-status').replaceChildren('Stopped');
    });
    if (this.body.childElementCount === 0) this.el.remove();
  }

  insert(node) {
    const before = this.activity || this.typing;
    if (before) this.body.insertBefore(node, before);
    else this.body.append(node);
  }
}

// stopNote is what the end of a reply says when its turn stopped early
// (message_end's stop_reason, or a stored reply's turn_stop_reason or
// model stop_reason), or
// '' when it ended as replies do.
export function stopNote(reason) {
  switch (reason) {
    case 'max_tokens': return 'The reply reached its length limit and was cut short.';
    case 'refusal': return 'The coach declined to answer this.';
    case 'aborted': return 'Stopped';
    case 'deadline': return 'Stopped: the reply took too long.';
    case 'max_rounds': return 'Stopped: the coach took too many steps for one reply.';
    case 'tool_limit': return 'Stopped: the coach called too many tools for one reply.';
    case 'circuit_open': return 'Stopped: the coach\'s tools kept failing.';
    case 'budget_exhausted': return 'Stopped: your token budget ran out.';
    case 'session_full': return 'This conversation is full: start a new one to go on.';
    default: return '';
  }
}

// STOPPED matches the result of a call the turn's end cut short: it was
// running when the turn stopped (stored "interrupted: …"), or the reply
// ended before it was ready ("not run: the reply ended …").
const STOPPED = /^(interrupted: the turn ended before this tool returned|not run: the reply ended)/;

// cutShort reports whether a tool_result is that of a call the turn's end
// cut short (STOPPED).
function cutShort(b) {
  return Boolean(b.is_error) && STOPPED.test(errorText(resultText(b.content)));
}

// setToolResult fills a card with its result.
export function setToolResult(c, content, isError, denied) {
  const text = isError ? errorText(resultText(content)) : resultText(content);
  // A call the user denied did not fail: it never ran.
  if (denied || (isError && text.startsWith('The user denied this call'))) {
    c.card.dataset.state = 'denied';
    c.status.replaceChildren(icon('alert', 'icon'), 'Denied');
    return;
  }
  // Nor did one the turn's end cut short: it was stopped, as a card
  // still running when the turn ends is (AssistantView.finish), live
  // and stored alike.
  if (isError && STOPPED.test(text)) {
    c.card.dataset.state = 'stopped';
    c.status.replaceChildren('Stopped');
    c.detail.append(h('div', { class: 'tool-label' }, 'Result'), h('pre', { class: 'tool-pre' }, text));
    return;
  }
  c.card.dataset.state = isError ? 'error' : 'done';
  c.status.replaceChildren(isError ? icon('alert', 'icon') : icon('check', 'icon'), isError ? 'Failed' : 'Done');
  if (text) c.detail.append(h('div', { class: 'tool-label' }, 'Result'), h('pre', { class: 'tool-pre' }, text));
}

// setToolWaiting marks a call's card as waiting for the user's approval.
export function setToolWaiting(c) {
  c.card.dataset.state = 'waiting';
  c.status.replaceChildren('Needs approval');
}

// errorText is a failed call's result as stored: the stream sends it
// wrapped as {"error": true, "code", "message"}.
function errorText(text) {
  try {
    const o = JSON.parse(text);
    if (o && o.error === true && typeof o.message === 'string') return o.message;
  } catch {
    // not JSON: the text as it is
  }
  return text;
}

// resultText reads a tool_result content: a string, or a list of blocks.
export function resultText(content) {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (b && b.type === 'text' ? b.text : '')).filter(Boolean).join('\n');
  return JSON.stringify(content, null, 2);
}

export class Transcript {
  // el is a live region: what is said while the conversation is open is
  // drawn into it. The stored messages are drawn into history, above it
  // and not live, or a screen reader would read them all aloud.
  constructor(el, scroller, history = el) {
    this.el = el;
    this.scroller = scroller;
    this.history = history;
    this.first = null; // the first message drawn
    this.cards = new Map(); // tool_use_id → card
    this.pinned = true;
    scroller.addEventListener('scroll', () => {
      this.pinned = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
    }, { passive: true });
  }

  clear() {
    this.el.replaceChildren();
    this.history.replaceChildren();
    this.first = null;
    this.cards.clear();
    this.pinned = true;
  }

  // stick keeps the newest line in view unless the reader scrolled up.
  stick(force = false) {
    if (force) this.pinned = true;
    if (this.pinned) this.scroller.scrollTop = this.scroller.scrollHeight;
  }

  addUser(text, extraClass = '', attachments = []) {
    const bubble = attachments.length > 0 ? userBubble(attachments, text) : h('div', { class: 'bubble' }, text);
    const el = h('article', { class: `msg user ${extraClass}`.trim() }, bubble);
    this.el.append(el);
    this.stick(true);
    return el;
  }

  startAssistant() {
    const v = new AssistantView(this);
    this.el.append(v.el);
    this.stick(true);
    return v;
  }

  // renderHistory draws stored messages. Consecutive assistant messages
  // (the rounds of one turn) share a view; tool results attach to their
  // cards; an answer to an interactive tool shows as the user's reply.
  // pending is the session's pending interaction, if any; opts.onAnswer
  // answers it. It closes at its expiry, and is drawn closed when it is
  // opts.closed (the server refused an answer to it). opts.settled says
  // no turn is running: a last message of the user's was not replied to.
  renderHistory(messages, pending, opts) {
    this.clear();
    this.first = messages[0] || null;
    const live = this.el;
    this.el = this.history;
    try {
      this.draw(messages, pending, opts);
    } finally {
      this.el = live;
    }
    this.stick(true);
  }

  // empty reports whether nothing is drawn.
  empty() {
    return this.el.childElementCount === 0 && this.history.childElementCount === 0;
  }

  // prependHistory draws the page of messages before the first one drawn
  // above it, keeping what the reader looks at in place. The results and
  // answers its last calls got in that first message are drawn with it.
  prependHistory(messages, opts) {
    if (messages.length === 0) return;
    const first = this.first;
    const carry = first && first.role === 'user'
      ? [{ ...first, content: '', content_blocks: blocksOf(first).filter((b) => b.type === 'tool_result') }] : [];
    // The page's last message of the user's was not replied to when the
    // message after the page starts a turn of its own.
    const settled = Boolean(first && first.role === 'user' && !isSummary(first) && blocksOf(first).some(startsTurn));
    const main = this.el;
    const pinned = this.pinned;
    const fromBottom = this.scroller.scrollHeight - this.scroller.scrollTop;
    const page = h('div');
    this.el = page;
    try {
      this.draw(messages.concat(carry), null, { ...opts, settled });
    } finally {
      this.el = main;
    }
    const head = this.history.firstElementChild;
    this.history.prepend(...page.childNodes);
    // A reply the page boundary cut in two (its rounds on both sides, no
    // message of the user's between) is one reply again.
    const tail = head && head.previousElementSibling;
    if (tail && tail.matches('.msg.assistant') && head.matches('.msg.assistant')) {
      tail.querySelector('.msg-body').append(...head.querySelector('.msg-body').childNodes);
      head.remove();
    }
    this.first = messages[0];
    this.pinned = pinned;
    this.scroller.scrollTop = this.scroller.scrollHeight - fromBottom;
  }

  // draw appends messages to el.
  draw(messages, pending, opts) {
    let view = null;
    // A turn that stored no reply (stopped, or failed, before the coach
    // wrote a word) leaves the user's message, or answer, alone: it says
    // so, where the reply would be, once the next one has come (or none
    // is running).
    let unanswered = false;
    const noReply = () => {
      if (!unanswered) return;
      unanswered = false;
      this.startAssistant().note(NO_REPLY, 'stopped');
      view = null;
    };
    const interactive = new Map(); // tool_use_id → {name, input, el}
    const drawPending = (v, data) => {
      const el = v.interaction(data, { ...opts, expiresAt: pending.expires_at });
      if (opts.closed && opts.closed === pending.tool_use_id) el.markClosed(NOT_OPEN);
      return el;
    };
    for (const m of messages) {
      // A compaction's summary is stored as a user message for the model;
      // the user never wrote it.
      if (isSummary(m)) continue;
      const blocks = blocksOf(m);
      if (m.role === 'user') {
        let said = false;
        let atts = []; // image and document blocks, shown above the text after them
        for (const b of blocks) {
          if (b.type === 'image' || b.type === 'document') { atts.push(attachmentView(b)); continue; }
          if (b.type === 'tool_result') {
            const it = interactive.get(b.tool_use_id);
            if (it && cutShort(b)) {
              // A question the reply's end cut short (Stop, the length
              // limit) was never asked, live: nor is it here, and its
              // "interrupted" result is not the user's answer. A call
              // waiting for approval keeps its card, stopped.
              if (it.el) it.el.remove();
              const c = this.cards.get(b.tool_use_id);
              if (c) setToolResult(c, b.content, b.is_error);
              continue;
            }
            if (it) {
              const label = answerLabel(it.name, b.content);
              if (it.el) it.el.markAnswered(label, b.content);
              if (label && !isDismissed(b)) {
                noReply();
                this.addUser(label, 'answer');
                view = null;
                unanswered = true;
              }
              continue;
            }
            const c = this.cards.get(b.tool_use_id);
            if (c) setToolResult(c, b.content, b.is_error);
          } else if (b.type === 'text' && b.text.trim() !== '') {
            noReply();
            this.addUser(b.text, '', atts);
            atts = [];
            said = true;
          }
        }
        if (atts.length > 0) {
          noReply();
          this.addUser('', '', atts);
          said = true;
        }
        if (said) {
          view = null;
          unanswered = true;
        }
        continue;
      }
      unanswered = false;
      if (!view) view = this.startAssistant();
      for (const b of blocks) {
        switch (b.type) {
          case 'text': view.text(b.text); break;
          case 'thinking': if (b.thinking) view.thinking(b.thinking); break;
          case 'tool_use':
            if (pending && pending.kind === 'approval' && pending.tool_use_id === b.id) {
              // The call waits for approval: its card, and the controls.
              setToolWaiting(view.toolCall(b.id, b.name, b.input));
              drawPending(view, { tool_use_id: b.id, name: b.name, input: b.input || {}, approval: true, reason: pending.reason });
              interactive.set(b.id, { name: b.name, input: b.input, el: null });
            } else if (isInteractive(b.name)) {
              const live = pending && pending.tool_use_id === b.id;
              const data = { tool_use_id: b.id, name: b.name, input: b.input || {} };
              const el = live ? drawPending(view, data) : view.interaction(data, { ...opts, inactive: true });
              interactive.set(b.id, { name: b.name, input: b.input, el });
            } else {
              view.toolCall(b.id, b.name, b.input);
            }
            break;
          default: // redacted thinking, images: nothing to show
        }
      }
      view.roundBreak();
      // The turn's own stop reason (a limit, a stop) is stored on its
      // last reply: it says what message_end said.
      const meta = m.metadata || {};
      const why = stopNote(meta.turn_stop_reason) || (m.partial ? 'Stopped before the reply was finished' : stopNote(meta.stop_reason));
      if (why) view.note(why, 'stopped');
    }
    if (opts.settled && !pending) noReply();
    // A pending call whose tool_use is not in the loaded page still gets
    // its controls.
    if (pending && !interactive.has(pending.tool_use_id)) {
      if (!view) view = this.startAssistant();
      drawPending(view, { tool_use_id: pending.tool_use_id, name: pending.name, input: pending.input || {},
        approval: pending.kind === 'approval', reason: pending.reason });
    }
    this.el.querySelectorAll('.msg.assistant').forEach((a) => {
      if (a.querySelector('.msg-body').childElementCount === 0) a.remove();
    });
  }
}

function blocksOf(m) {
  if (Array.isArray(m.content_blocks) && m.content_blocks.length > 0) return m.content_blocks;
  return m.content ? [{ type: 'text', text: m.content }] : [];
}

// NO_REPLY stands where the reply to a message would be, when its turn
// stored none: the history does not say why (Stop, a limit, an error).
const NO_REPLY = 'The coach did not reply to this.';

function isSummary(m) {
  return Boolean(m.metadata && m.metadata.kind === 'summary');
}

// startsTurn reports whether a block of a user's message is something
// they said (a new turn), not a result of the coach's tools.
function startsTurn(b) {
  return (b.type === 'text' && b.text.trim() !== '') || b.type === 'image' || b.type === 'document';
}

function isDismissed(b) {
  return b.is_error && /dismiss/i.test(resultText(b.content));
}
