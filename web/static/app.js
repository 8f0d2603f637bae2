// coachd's browser UI: sign-in, sessions, the streaming chat and the notes
// panel. No framework and no build step: ES modules served from the binary.

import { Api, ApiError, takeKeyFromURL } from './api.js';
import { StreamPhase, TextBatcher, Phase } from './stream.js';
import { followTurn, askAgain } from './follow.js';
import { Transcript, setToolResult, setToolWaiting, stopNote } from './messages.js';
import { isInteractive } from './interactions.js';
import { NotesPanel } from './notes.js';
import { describeError, Banner } from './banner.js';
import { h, humanize, toast } from './ui.js';
import { Attachments } from './attach.js';
import { VoiceButton } from './voice.js';
import { renderBudget, renderSessions as renderSessionList, drawIcons } from './header.js';

const KEY = 'coachd.key';
const SESSIONS_PAGE = 50; // sessions the sidebar lists, and adds a click
const HISTORY_PAGE = 100; // messages a conversation opens with, and adds a page
const $ = (id) => document.getElementById(id);

const SUGGESTIONS = [
  'Help me plan a realistic week',
  'What do you remember about me?',
  'Give me one thing to try today',
];

const state = {
  api: null,
  user: null,
  sessions: [],
  sessionId: '',
  controller: null, // AbortController of the running turn
  live: null, // AssistantView of the running turn
  lastTurn: null, // body of the last turn, for Retry
  lastAnswer: null, // {body, label} of the last answer sent, for Retry
  lastSend: null, // the last message sent (deliver), for Retry
  cutView: null, // the reply a lost stream cut, which Retry writes on in
  resendable: false, // Retry would send lastTurn's body, files and all, again
  loading: '', // the session whose history is being loaded
  shown: SESSIONS_PAGE, // how many sessions the sidebar lists
  moreSessions: false, // older sessions are left to list
  sessionsFailed: false, // the list could not be read
  listRead: 0, // the sessions list reads asked for: only the last one's answer is drawn
  pickAgent: false, // there are coaches to choose from
  refused: '', // why the last turn's request was refused, if it was
  stopping: null, // the controller of a turn being stopped
  asking: null, // the controller of a turn whose request awaits its answer
  stopAsked: null, // that controller, when Stop was pressed meanwhile
  ended: false, // the open conversation is completed or expired
  before: '', // the cursor of the conversation's page before those drawn
  earlier: false, // that page is being read
};

// The tabs of this browser on one conversation: a turn one of them
// starts, the others showing that conversation follow (see wire).
const tabs = typeof BroadcastChannel === 'function' ? new BroadcastChannel('coachd.turns') : null;

const transcript = new Transcript($('live'), $('scroller'), $('history'));
const banner = new Banner($('banner-host'), { onRetry: () => retry(), onFocusLost: () => focusComposer() });
const phase = new StreamPhase(onPhase);
let notes = null;
const attachments = new Attachments({
  button: $('attach'), input: $('attach-input'), tray: $('attach-tray'), error: $('attach-error'),
  dropZone: $('composer'), text: $('input'), getApi: () => state.api, onChange: () => updateSend(),
});
const voice = new VoiceButton($('mic'), {
  sessionId: () => state.sessionId,
  adopt: (id) => { adoptSession(id); refreshSessions(); },
  stored: (id) => { if (id === state.sessionId) openSession(id); },
});

// ---- sign-in ---------------------------------------------------------------

function show(view) {
  document.body.dataset.view = view;
  $('signin').hidden = view !== 'signin';
  $('app').hidden = view !== 'app';
}

function showSignIn(message = '') {
  show('signin');
  const err = $('signin-error');
  err.textContent = message;
  err.hidden = !message;
  $('signin-key').focus();
}

async function signIn(key, fromForm) {
  const api = new Api(key);
  try {
    const user = await api.me();
    localStorage.setItem(KEY, key);
    state.api = api;
    state.user = user;
    enterApp();
    return true;
  } catch (err) {
    if (err.status === 401) {
      localStorage.removeItem(KEY);
      showSignIn(fromForm ? 'That key was not accepted. Check it and try again.' : 'Your saved key is no longer accepted. Please sign in again.');
    } else {
      showSignIn(err.message);
    }
    return false;
  }
}

// signOut forgets the user: nothing of theirs stays in the page for the
// next person to sign in on this browser to see, or to send. forget=false
// keeps the stored key (another tab stored a new one).
function signOut(message = '', forget = true) {
  stop(true);
  if (forget) localStorage.removeItem(KEY);
  voice.stop();
  state.api = null;
  state.user = null;
  state.sessionId = '';
  state.sessions = [];
  state.shown = SESSIONS_PAGE;
  state.moreSessions = false;
  state.sessionsFailed = false;
  state.pickAgent = false;
  state.lastTurn = null;
  state.lastAnswer = null;
  state.lastSend = null;
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  transcript.clear();
  setBefore('');
  banner.clear();
  attachments.clearAll();
  $('input').value = '';
  autosize();
  if (notes) notes.reset();
  openNotes(false);
  $('me-name').textContent = '';
  $('me-avatar').textContent = '';
  renderSessions();
  renderBudget(state.user);
  showSignIn(message);
}

function onAuthError() {
  signOut('Your key is no longer accepted. Please sign in again.');
}

function enterApp() {
  show('app');
  $('me-name').textContent = state.user.name || state.user.id;
  $('me-avatar').textContent = (state.user.name || '?').charAt(0).toUpperCase();
  renderBudget(state.user);
  updateSend();
  // The panel is built once; signing in again only gives it the new key.
  if (!notes) {
    notes = new NotesPanel($('notes'), state.api, {
      onCount: (n) => { $('notes-count').textContent = String(n); $('notes-count').hidden = n === 0; },
      onAuthError,
    });
  }
  notes.api = state.api;
  notes.notes = [];
  notes.load();
  voice.setup(state.api);
  loadAgents();
  refreshSessions();
  route();
}

// loadAgents offers the coaches a user may start, when there is a choice;
// a new conversation goes to the one picked.
async function loadAgents() {
  const api = state.api;
  const pick = $('agent');
  try {
    const { agents = [] } = await api.agents();
    if (state.api !== api) return;
    const open = agents.filter((a) => !a.internal);
    pick.replaceChildren(...open.map((a) => h('option', { value: a.name, title: a.description || false, selected: a.default }, a.name)));
    state.pickAgent = open.length > 1;
    showWelcome(!$('welcome').hidden);
    renderSessions();
  } catch (err) {
    if (err.status === 401) onAuthError();
  }
}

// ---- sessions ----------------------------------------------------------------

async function refreshSessions() {
  const api = state.api;
  if (!api) return;
  // Reads overlap (a turn's end, a tab's turn, sign-in) and their answers
  // come back in any order: one asked before the last would draw a list
  // older than what is drawn.
  const read = ++state.listRead;
  try {
    const res = await api.sessions(state.shown);
    if (state.api !== api || read !== state.listRead) return; // signed out, or read again, meanwhile
    state.sessions = res.sessions.sort((a, b) => String(b.updated_at).localeCompare(String(a.updated_at)));
    state.moreSessions = res.more;
    state.sessionsFailed = false;
    renderSessions();
  } catch (err) {
    if (err.status === 401) return onAuthError();
    if (state.api !== api || read !== state.listRead) return;
    // A list that never came is not an empty one: the sidebar says so.
    state.sessionsFailed = true;
    renderSessions();
  }
}

function renderSessions() {
  renderSessionList(state.sessions, state.sessionId, state.pickAgent);
  $('session-more').hidden = !state.moreSessions;
  const failed = state.sessionsFailed && state.sessions.length === 0;
  $('session-empty').textContent = failed ? 'Your conversations could not be loaded.' : 'No conversations yet.';
  $('session-retry').hidden = !failed;
}

function showMoreSessions() {
  state.shown += SESSIONS_PAGE;
  refreshSessions();
}

// route opens the session named in the URL (#/sess_…), or a new chat.
function route() {
  const m = location.hash.match(/^#\/(sess_[A-Za-z0-9_-]+)$/);
  const id = m ? m[1] : '';
  if (id && id === state.sessionId && !transcript.empty()) return;
  if (id) openSession(id);
  else newChat(false);
}

function newChat(focus = true) {
  leave();
  state.sessionId = '';
  setEnded(false);
  state.loading = '';
  updateSend();
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  transcript.clear();
  setBefore('');
  banner.clear();
  showWelcome(true);
  renderSessions();
  closeSidebar();
  if (focus) $('input').focus();
}

// closed names a pending question the server refused an answer to: it
// is drawn closed.
async function openSession(id, closed = '') {
  leave();
  state.sessionId = id;
  setEnded(false);
  // Nothing is sent until the history is drawn: drawing it clears the
  // transcript, with any reply being written into it.
  state.loading = id;
  updateSend();
  banner.clear();
  showWelcome(false);
  transcript.clear();
  setBefore('');
  transcript.el.append(h('div', { class: 'loading' }, h('i'), h('i'), h('i')));
  renderSessions();
  closeSidebar();
  let running = null;
  try {
    // The conversation opens at its last page; the ones before it come
    // on request (loadEarlier).
    const [sess, { messages: msgs, prev }] = await Promise.all([state.api.session(id), state.api.messagesBefore(id, 'end', HISTORY_PAGE)]);
    if (state.sessionId !== id) return; // another session was opened meanwhile
    // A turn still running (the page was reloaded mid-reply) is followed
    // again from its start: what it stored already is drawn by the
    // replay, not from the history.
    setEnded(Boolean(sess.status) && sess.status !== 'active');
    running = sess.running_turn || null;
    const upTo = running && running.message_id ? msgs.findIndex((m) => m.id === running.message_id) : -1;
    if (running) running = { ...running, again: sentAgain(upTo >= 0 ? msgs.slice(0, upTo) : msgs) };
    transcript.renderHistory(upTo >= 0 ? msgs.slice(0, upTo) : msgs, sess.pending_interaction, { onAnswer: answer, onClosed: questionClosed, closed, settled: !running });
    setBefore(prev);
    showWelcome(msgs.length === 0);
  } catch (err) {
    if (state.sessionId !== id) return;
    if (err.status === 401) return onAuthError();
    transcript.clear();
    banner.show(describeError(err.status === 404 ? new ApiError(404, 'not_found', 'That conversation does not exist or is not yours.') : err));
  } finally {
    if (state.loading === id) {
      state.loading = '';
      updateSend();
    }
  }
  if (running && state.sessionId === id && !state.loading) runTurn({ resumeAfter: running.last_event_id, again: running.again });
}

// sentAgain is the request that sends the running turn's message again,
// the last of msgs the user wrote (msgs end before the turn's reply): a
// text, without files. Retry sends it when the followed turn fails after
// the coach replied; the server runs the message's turn again, storing
// it once. null for an answer, or a message with files.
function sentAgain(msgs) {
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m.role !== 'user') continue;
    const blocks = Array.isArray(m.content_blocks) && m.content_blocks.length > 0 ? m.content_blocks : [{ type: 'text', text: m.content || '' }];
    if (!blocks.every((b) => b.type === 'text')) return null;
    const text = blocks.map((b) => b.text).join('').trim();
    return text ? { message: text } : null;
  }
  return null;
}

// setBefore notes the cursor of the page before those drawn ('' when
// they start the conversation), and offers it.
function setBefore(cursor) {
  state.before = cursor;
  $('earlier-more').hidden = !cursor;
}

// loadEarlier draws the page of the open conversation before those drawn.
async function loadEarlier() {
  const { sessionId: id, before, api } = state;
  if (!before || state.earlier || state.loading || !api) return;
  state.earlier = true;
  const btn = $('earlier-more');
  // Not disabled: a disabled button loses the focus, and a keyboard user
  // their place (state.earlier refuses a second press meanwhile).
  btn.setAttribute('aria-disabled', 'true');
  btn.setAttribute('aria-busy', 'true');
  try {
    const page = await api.messagesBefore(id, before, HISTORY_PAGE);
    if (state.sessionId !== id || state.before !== before) return; // left meanwhile
    transcript.prependHistory(page.messages, { onAnswer: answer });
    const focused = document.activeElement === btn;
    setBefore(page.prev);
    // The button goes at the conversation's start: the focus goes to
    // its first message, where reading on begins.
    const first = $('history').querySelector('.msg');
    if (focused && btn.hidden && first) {
      first.tabIndex = -1;
      first.focus({ preventScroll: true });
    }
  } catch (err) {
    if (err.status === 401) onAuthError();
    else if (state.sessionId === id) toast(describeError(err).text);
  } finally {
    state.earlier = false;
    btn.removeAttribute('aria-disabled');
    btn.removeAttribute('aria-busy');
  }
}

function showWelcome(on) {
  $('welcome').hidden = !on;
  // The coach is chosen for a new conversation only.
  $('agent-pick').hidden = !(on && state.pickAgent && !state.sessionId);
}

// ---- the turn ------------------------------------------------------------------

function onPhase(s) {
  document.body.dataset.phase = s.phase;
  const busy = s.phase !== Phase.idle;
  // The button pressed hides: its focus would go to the page, and the
  // next keystrokes with it.
  const pressed = document.activeElement === $(busy ? 'send' : 'stop');
  $('send').hidden = busy;
  $('stop').hidden = !busy;
  if (pressed) focusComposer();
  // The reply is drawn again every frame: a screen reader hears the
  // live region once it is written, not at every frame.
  $('live').setAttribute('aria-busy', String(busy));
  updateSend();
  if (state.live) {
    state.live.setActivity(s.shimmer, s.tools > 1 ? `Running ${s.tools} tools…` : `${humanize(s.toolName)}…`);
  }
}

function updateSend() {
  $('send').disabled = phase.phase !== Phase.idle || Boolean(state.loading) ||
    ($('input').value.trim() === '' && !attachments.ready()) || attachments.busy();
}

async function send(text) {
  text = text.trim();
  if ((!text && !attachments.ready()) || attachments.busy() || phase.phase !== Phase.idle || state.loading) return;
  // An ended conversation takes no more messages: this one starts a new
  // conversation (the ended one stays in the list).
  if (state.ended && state.sessionId) newChat(false);
  const files = attachments.sending();
  $('input').value = '';
  autosize();
  showWelcome(false);
  focusComposer(); // from Send or a suggestion, both hidden now
  // Sent again from the composer, the message refused last is this one:
  // its "Not sent" copy goes, or it would show twice.
  const prev = state.lastSend;
  const again = prev && prev.text === text && prev.bubble.classList.contains('failed');
  if (again) prev.bubble.remove();
  const bubble = transcript.addUser(text, '', Attachments.previews(files));
  // A message instead of an answer dismisses a pending question (the
  // server records it so); its controls go quiet.
  const open = [...document.querySelectorAll('.interaction:not(.inactive)')];
  let body = files.length > 0 ? { message: text, attachments: Attachments.refs(files) } : { message: text };
  // A new conversation goes to the coach picked.
  if (!state.sessionId && state.pickAgent) body.agent = $('agent').value;
  // The message whose answer was lost, sent unchanged from the composer
  // it was put back in, is that request again, as from Retry: with its
  // key, a turn the server took is replayed, not run twice.
  if (again && state.refused === 'network' && state.lastTurn === prev.body && JSON.stringify(body) === JSON.stringify(prev.body)) body = prev.body;
  const accepted = await deliver({ body, text, bubble, files, open });
  if (!accepted) {
    bubble.classList.add('failed');
    bubble.append(h('span', { class: 'msg-note' }, 'Not sent'));
    if ($('input').value === '') { $('input').value = text; autosize(); }
    // The conversation is answering elsewhere (another tab, another
    // device): draw it again from the store and follow that reply, so
    // this page does not go on without it. The message waits in the
    // composer.
    if (state.refused === 'turn_in_progress' && state.sessionId) {
      toast(describeError({ type: state.refused }).text);
      openSession(state.sessionId);
    }
    // The conversation was deleted elsewhere (another tab, the API): a
    // new one takes the message, still in the composer.
    if (state.refused === 'not_found' && state.sessionId) sessionGone();
  }
}

// deliver runs the turn of a message the user sent: m is {body, text,
// bubble, files, open (the questions it dismisses)}. Retry delivers a
// refused one again, drawn as sent once it is taken.
async function deliver(m) {
  state.lastSend = m;
  // Once the server took the message, its files leave the tray; files
  // attached while the reply is written stay for the next message.
  const accepted = await runTurn(m.body, () => {
    m.open.forEach((el) => el.markAnswered && el.markAnswered(''));
    attachments.sent(m.files);
    if (m.bubble.classList.contains('failed')) {
      m.bubble.classList.remove('failed');
      m.bubble.querySelector('.msg-note')?.remove();
      // The composer held it back for sending again: it is sent.
      if ($('input').value.trim() === m.text) { $('input').value = ''; autosize(); }
    }
  });
  // The message is stored with its files: their uploads can go, unless
  // Retry may send this very body again.
  if (accepted && !state.resendable) attachments.discard(m.files);
  return accepted;
}

// sessionGone opens a new conversation in place of the open one, deleted
// elsewhere, keeping what the composer holds, and says why.
function sessionGone(text = 'This conversation was deleted, maybe in another tab. Your message is kept: send it to start a new conversation.') {
  const kept = $('input').value;
  newChat();
  $('input').value = kept;
  autosize();
  banner.show({ type: 'deleted', title: 'Conversation deleted', text });
  refreshSessions();
}

// answer sends the user's answer to an interactive tool; it resolves true
// once the resumed turn has started. again is the body of the answer
// Retry sends again (and its key with it).
async function answer(toolUseId, content, label, again = null) {
  if (phase.phase !== Phase.idle || !state.sessionId) return false;
  const bubble = transcript.addUser(label, 'answer');
  focusComposer(); // the answer's controls are disabled now
  const body = again || { tool_result: { tool_use_id: toolUseId, content } };
  state.lastAnswer = { body, label }; // for Retry
  // Sent from Retry, not from the question, its controls are live still:
  // once the answer is taken they show it.
  const ok = await runTurn(body, () => {
    const box = [...document.querySelectorAll('.interaction:not(.submitted):not(.answered)')].find((b) => b.dataset.id === toolUseId);
    if (box && box.markAnswered) box.markAnswered(label);
  });
  if (!ok) bubble.remove();
  // The question was answered in another tab (whose reply may still be
  // written), or expired: the conversation is drawn again as stored,
  // instead of the server's refusal beside live controls.
  const refused = state.refused;
  if (!ok && refused === 'not_found' && state.sessionId) {
    sessionGone('This conversation was deleted, maybe in another tab, so its question can no longer be answered. Send a message to start a new conversation.');
  }
  if (!ok && (refused === 'conflict' || refused === 'turn_in_progress') && state.sessionId) {
    openSession(state.sessionId, refused === 'conflict' ? toolUseId : '');
  }
  return ok;
}

// questionClosed: a question closed (it expired) while the user was in
// it; what they typed there goes to the composer, unless that holds
// words of its own, and so does the focus: a message is how to go on.
function questionClosed(typed) {
  if (typed && $('input').value.trim() === '') {
    $('input').value = typed;
    autosize();
  }
  focusComposer();
}

async function retry() {
  if (!state.lastTurn || phase.phase !== Phase.idle) return;
  focusComposer(); // the Retry pressed goes with its banner
  // An answer refused before its stream goes again as an answer: drawn
  // as the user's, its question closed.
  const a = state.lastAnswer;
  if (state.refused && a && a.body === state.lastTurn) {
    answer(a.body.tool_result.tool_use_id, a.body.tool_result.content, a.label, a.body);
    return;
  }
  // So does a message: drawn as sent, out of the composer and the tray.
  const m = state.lastSend;
  const resend = Boolean(state.refused && m && m.body === state.lastTurn);
  const ok = await (resend ? deliver(m) : runTurn(state.lastTurn));
  // The conversation was deleted elsewhere meanwhile: as a message sent
  // to it, Retry opens a new one and says why.
  if (!ok && state.refused === 'not_found' && state.sessionId) {
    sessionGone(resend ? undefined : 'This conversation was deleted, maybe in another tab. Send a message to start a new conversation.');
  }
}

// STOP_GRACE_MS bounds how long a stopped turn's stream is read on.
const STOP_GRACE_MS = 3000;

// stop stops the running turn. The turn outlives its connection, so it is
// stopped on the server, which ends the stream with what it stored: the
// stream is read on to that end, for the page to show exactly the stored
// reply (and no longer than STOP_GRACE_MS). now stops reading at once
// too, as does a second stop. Pressed before the request was answered,
// it waits for the answer (no longer than STOP_GRACE_MS): the server may
// have stored the message and begun its turn, which cutting the request
// would not stop; the answer names the conversation to stop it in.
function stop(now = false) {
  const c = state.controller;
  if (c && !now && state.asking === c && state.stopAsked !== c && phase.phase !== Phase.idle) {
    state.stopAsked = c;
    setTimeout(() => { if (state.asking === c) c.abort(); }, STOP_GRACE_MS);
    return;
  }
  if (!state.sessionId || phase.phase === Phase.idle || !c) {
    if (c) c.abort();
    return;
  }
  if (now || state.stopping === c) {
    c.abort();
    if (state.stopping === c) return;
  }
  state.stopping = c;
  const abort = () => c.abort();
  // A stop refused, or whose request failed, may not have stopped the
  // turn: it goes on on the server, and the page follows it on, to the
  // reply stored, rather than say "Stopped" under a reply that is not;
  // Stop may be pressed again.
  state.api.stopTurn(state.sessionId).then(() => setTimeout(abort, STOP_GRACE_MS), (err) => {
    if (state.stopping !== c || c.signal.aborted) return;
    state.stopping = null;
    if (err.status === 401) onAuthError();
    else toast('The reply could not be stopped. Press Stop to try again.', 'error');
  });
}

// leave stops following the running turn without stopping it: the reply
// goes on on the server (the coachd dialect's turns outlive their
// connection), is stored whole, and is followed again when its
// conversation is opened.
function leave() {
  if (state.controller) state.controller.abort();
}

// runTurn streams one turn. It resolves true when the server accepted the
// request (the stream started), false when it was refused before that;
// onAccepted runs as soon as the stream starts.
async function runTurn(body, onAccepted = () => {}) {
  if (!phase.begin()) return false;
  banner.clear();
  state.lastTurn = body;
  state.resendable = false;
  state.refused = ''; // the error code of a request refused before its stream
  const controller = new AbortController();
  state.controller = controller;
  // Retry of a lost stream writes on in the reply it cut, when that is
  // still the last thing drawn, not its rest in a reply of its own.
  const cut = body.resumeAfter ? state.cutView : null;
  state.cutView = null;
  const view = cut && cut.el.parentNode === transcript.el && transcript.el.lastElementChild === cut.el ? cut : transcript.startAssistant();
  state.live = view;
  view.showTyping();
  const batcher = new TextBatcher((t) => view.text(t));
  let accepted = false;
  let replied = false; // the coach said something before an error
  let authFailed = false;
  let missed = false; // the event log lost some of the turn: reload it
  let gone = ''; // the conversation, deleted elsewhere while the turn ran
  const toolsUsed = [];
  state.asking = controller;
  try {
    // { resumeAfter } follows again a turn whose stream was lost.
    // A request whose answer is lost after Stop was pressed is asked
    // again (askAgain): the server may have begun the turn to stop.
    const req = state.sessionId ? { ...body, session_id: state.sessionId } : body;
    const res = body.resumeAfter ? await state.api.resume(state.sessionId, body.resumeAfter, controller.signal)
      : await askAgain(() => state.api.chatStream(req, controller.signal, body), {
        signal: controller.signal,
        again: () => state.stopAsked === controller,
        reconnecting: (on) => view.reconnecting(on),
      });
    accepted = true;
    state.asking = null;
    onAccepted();
    adoptSession(res.headers.get('X-Coachd-Session-Id'));
    // Stop was pressed while the request travelled: the turn it began
    // is stopped now that its conversation is known.
    if (state.stopAsked === controller) stop();
    if (tabs && state.sessionId && !body.resumeAfter) tabs.postMessage({ session: state.sessionId });
    // A stream cut before its first event resumes from the turn's start.
    const turn = res.headers.get('X-Coachd-Turn');
    const handle = (event, data) => {
      switch (event) {
        case 'message_start': adoptSession(data.session_id); break;
        case 'content_delta': replied = true; phase.text(); batcher.push(data.text); break;
        case 'thinking_delta': replied = true; batcher.flush(); view.thinking(data.text); break;
        case 'function_call':
          replied = true;
          batcher.flush();
          // An interactive tool is not work in progress: its controls
          // arrive with the interaction event.
          if (isInteractive(data.name)) break;
          view.toolCall(data.id, data.name);
          phase.toolStarted(data.id, data.name);
          toolsUsed.push(data.name);
          break;
        case 'function_result': {
          const c = transcript.cards.get(data.tool_use_id);
          if (c) setToolResult(c, data.result, data.is_error, data.denied);
          phase.toolFinished(data.tool_use_id);
          break;
        }
        case 'round_boundary': batcher.flush(); view.roundBreak(); phase.roundBoundary(); break;
        case 'interaction': {
          // It closes at its expiry, as the stored one does, while on
          // screen too.
          batcher.flush();
          view.interaction(data, { onAnswer: answer, onClosed: questionClosed, expiresAt: data.expires_at });
          break;
        }
        case 'approval_required': {
          // The call's card waits; Approve / Deny resume the turn.
          batcher.flush();
          phase.toolFinished(data.tool_use_id);
          const c = transcript.cards.get(data.tool_use_id);
          if (c) setToolWaiting(c);
          view.interaction({ ...data, approval: true }, { onAnswer: answer, onClosed: questionClosed, expiresAt: data.expires_at });
          break;
        }
        case 'events_missed':
          // The log no longer has what came after the last event seen:
          // what follows would be drawn into a reply with a hole in it.
          // The conversation is drawn again from the store instead.
          missed = true;
          return true;
        case 'session_changed': onSessionChanged(data); break;
        case 'usage': onUsage(); break;
        case 'message_end': {
          batcher.flush();
          // A turn that stopped early says why: a reply cut short must
          // not look finished.
          const why = stopNote(data.stop_reason);
          if (why && !controller.signal.aborted) view.note(why, 'stopped');
          phase.complete();
          return true;
        }
        case 'error':
          batcher.flush();
          // A server going down hands the turn over: it goes on (on another
          // replica, or in the log), picked up again after the id given.
          // So does a stream whose log could not be read (the database
          // away for a moment): the turn goes on, and is not sent again.
          if (data.retryable && (data.type === 'server_shutdown' || (data.type === 'unavailable' && data.last_event_id))) {
            return { resumeAfter: data.last_event_id || '', retryAfter: Number(data.retry_after) || 0 };
          }
          // The conversation was deleted elsewhere (another tab, the
          // API) while its reply was written: there is nothing to retry.
          if (data.type === 'not_found' && state.sessionId) {
            gone = state.sessionId;
            return true;
          }
          // The server stored the message before the upstream failed:
          // Retry re-runs it instead of sending it a second time. A
          // followed turn (a reload, a lost stream) that failed after the
          // coach replied is not followed again, to the same error: its
          // message is sent again (the server runs it again, stored once).
          // A message with files is run again too: sent again, the
          // server would store it a second time.
          if (!replied || body.attachments) state.lastTurn = { retry: true };
          else if (body.resumeAfter) state.lastTurn = body.again || { retry: true };
          state.resendable = state.lastTurn === body;
          banner.show(describeError(data, budgetUnit()));
          return true;
        default: // unknown events are ignored, so the server can add more
      }
      return false;
    };
    await followTurn(res, body.resumeAfter || (turn ? `${turn}:0` : ''), {
      handle,
      signal: controller.signal,
      canResume: () => Boolean(state.sessionId),
      resume: (lastId) => state.api.resume(state.sessionId, lastId, controller.signal),
      reconnecting: (on) => {
        if (on) batcher.flush();
        view.reconnecting(on);
      },
    });
  } catch (err) {
    batcher.flush();
    if (accepted && err.resumeAfter && state.sessionId) {
      state.lastTurn = { resumeAfter: err.resumeAfter, again: body.resumeAfter ? body.again : body.message !== undefined && !body.attachments && body };
      state.cutView = view;
    }
    state.resendable = !controller.signal.aborted && state.lastTurn === body;
    if (controller.signal.aborted) {
      view.note('Stopped', 'stopped');
    } else if (accepted && err instanceof ApiError && err.code === 'not_found' && state.sessionId) {
      gone = state.sessionId; // deleted while its reply was followed
    } else if (err instanceof ApiError) {
      if (!accepted) state.refused = err.code;
      if (err.status === 401) authFailed = true;
      else banner.show(describeError(err, budgetUnit()));
    } else {
      console.error('coachd: turn failed', err);
      // The request's answer was lost: the server may have taken the
      // message or not. Retry sends it again as sent (with its key, a
      // turn taken is replayed, not run twice).
      if (!accepted) state.refused = 'network';
      banner.show(describeError(new ApiError(0, 'network', 'The connection dropped before the reply finished.')));
    }
  } finally {
    if (state.asking === controller) state.asking = null;
    batcher.flush();
    phase.complete();
    view.finish();
    state.live = null;
    if (state.controller === controller) state.controller = null;
    phase.finish();
  }
  if (authFailed) onAuthError();
  else if (accepted) {
    afterTurn(toolsUsed);
    // The other tabs' headers show what this turn held and spent.
    if (tabs) tabs.postMessage({ ended: state.sessionId });
  }
  // Refused for the budget: it was spent or held elsewhere (another tab,
  // an app's own loop), and the header says so beside the banner.
  else if (state.refused === 'budget_exhausted') refreshMe();
  if (missed && state.sessionId && !controller.signal.aborted) openSession(state.sessionId);
  if (gone && gone === state.sessionId) {
    sessionGone('This conversation was deleted, maybe in another tab, while the coach was replying. Send a message to start a new conversation.');
  }
  return accepted;
}

function adoptSession(id) {
  if (!id || id === state.sessionId) return;
  state.sessionId = id;
  setEnded(false);
  history.replaceState(null, '', `#/${id}`);
}

// setEnded notes whether the open conversation has ended, and says so in
// the composer.
function setEnded(on) {
  state.ended = on;
  $('input').placeholder = on ? 'This conversation has ended: message your coach to start a new one' : 'Message your coach';
}

function onSessionChanged(data) {
  if (data.change === 'completed') {
    toast('Session complete. Nice work!', 'success');
    setEnded(true);
  }
  refreshSessions();
}

async function afterTurn(toolsUsed) {
  refreshSessions();
  refreshMe();
  if (notes && toolsUsed.some((n) => /note/.test(n || ''))) notes.load();
}

// ---- budget ---------------------------------------------------------------------

// onUsage reads the user again when the running turn reports its usage:
// the event's budget_remaining leaves out what every turn under way holds
// (other tabs', an app's own loop's), which is not spent, so the header
// is drawn from GET /v1/me, used and held apart.
function onUsage() {
  if (state.user) refreshMe();
}

// budgetUnit is what the user's budget counts: tokens, weighted or usd.
function budgetUnit() {
  return (state.user && state.user.budget && state.user.budget.unit) || 'tokens';
}

let meAsked = 0; // reads of the user asked for
let meShown = 0; // the last of them drawn

async function refreshMe() {
  const api = state.api;
  if (!api) return;
  const n = ++meAsked;
  try {
    const user = await api.me();
    // Signed out (or in as someone else) meanwhile: the answer is the
    // user who left's, not for this page to show or keep. An answer
    // overtaken by a later read's is older than what is drawn.
    if (state.api !== api || n < meShown) return;
    meShown = n;
    state.user = user;
    renderBudget(state.user);
  } catch (err) {
    if (err.status === 401 && state.api === api) onAuthError();
  }
}

// ---- composer, keyboard, panels --------------------------------------------------------

// focusComposer gives the keyboard's focus to the composer.
function focusComposer() {
  if (document.activeElement !== $('input')) $('input').focus({ preventScroll: true });
}

function autosize() {
  const t = $('input');
  t.style.height = 'auto';
  t.style.height = `${Math.min(t.scrollHeight, 200)}px`;
  updateSend();
}

// openNotes opens or closes the notes panel. Opened, it takes the focus
// (on a phone it covers the page); closed, a focus left in it goes back
// to the Notes button.
function openNotes(open) {
  const was = document.body.classList.contains('notes-open');
  document.body.classList.toggle('notes-open', open);
  $('notes').setAttribute('aria-hidden', String(!open));
  $('notes-open').setAttribute('aria-expanded', String(open));
  $('scrim').hidden = !open && !document.body.classList.contains('sidebar-open');
  if (open && notes && !notes.loaded) notes.load();
  if (open && !was) $('notes').querySelector('.add-note').focus();
  if (!open && was && $('notes').contains(document.activeElement)) $('notes-open').focus();
}

// openSidebar opens the conversation list as a drawer (on a phone): the
// focus goes into it, to the open conversation or New conversation.
function openSidebar() {
  document.body.classList.add('sidebar-open');
  $('scrim').hidden = false;
  $('sidebar-open').setAttribute('aria-expanded', 'true');
  ($('session-list').querySelector('.session.active') || $('new-chat')).focus();
}

// closeSidebar closes the drawer; a focus left in it goes back to the
// button that opened it (or somewhere better, set after this).
function closeSidebar() {
  const open = document.body.classList.contains('sidebar-open');
  document.body.classList.remove('sidebar-open');
  $('scrim').hidden = !document.body.classList.contains('notes-open');
  $('sidebar-open').setAttribute('aria-expanded', 'false');
  if (open && $('sidebar').contains(document.activeElement)) $('sidebar-open').focus();
}

function wire() {
  $('signin-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const key = $('signin-key').value.trim();
    if (!key) return;
    $('signin-submit').disabled = true;
    await signIn(key, true);
    $('signin-submit').disabled = false;
  });
  $('composer').addEventListener('submit', (e) => { e.preventDefault(); send($('input').value); });
  $('input').addEventListener('input', autosize);
  $('input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send($('input').value);
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key !== 'Escape') return;
    // Pressed in the notes panel, Esc is the panel's: it closes it (the
    // focus goes back to its button), and a reply being written goes on.
    if (document.activeElement && document.activeElement.closest('#notes')) {
      e.preventDefault();
      openNotes(false);
      $('notes-open').focus();
      return;
    }
    // So is the conversations drawer's (on a phone): it closes.
    if (document.body.classList.contains('sidebar-open') && $('sidebar').contains(document.activeElement)) {
      e.preventDefault();
      closeSidebar();
      return;
    }
    if (phase.phase !== Phase.idle) { e.preventDefault(); stop(); return; }
    if (document.body.classList.contains('notes-open')) openNotes(false);
    else closeSidebar();
  });
  $('stop').addEventListener('click', () => stop());
  $('new-chat').addEventListener('click', () => newChat());
  $('session-more').addEventListener('click', showMoreSessions);
  $('session-retry').addEventListener('click', () => refreshSessions());
  $('earlier-more').addEventListener('click', loadEarlier);
  // Scrolled near the top, the page before comes by itself.
  $('scroller').addEventListener('scroll', () => { if ($('scroller').scrollTop < 200) loadEarlier(); }, { passive: true });
  $('signout').addEventListener('click', () => signOut());
  $('notes-open').addEventListener('click', () => openNotes(!document.body.classList.contains('notes-open')));
  $('notes-close').addEventListener('click', () => openNotes(false));
  $('sidebar-open').addEventListener('click', openSidebar);
  $('sidebar-close').addEventListener('click', closeSidebar);
  $('scrim').addEventListener('click', () => { closeSidebar(); openNotes(false); });
  window.addEventListener('hashchange', () => {
    if (takeKeyFromURL(KEY)) signIn(localStorage.getItem(KEY), false);
    else if (state.api) route();
  });
  // The key is the browser's, shared by its tabs: when another tab signs
  // out, or in with another key, this one follows.
  window.addEventListener('storage', (e) => {
    if (e.storageArea !== localStorage || (e.key !== KEY && e.key !== null)) return;
    const key = localStorage.getItem(KEY);
    if (state.api && state.api.key === key) return;
    if (state.api) signOut(key ? '' : 'You signed out in another tab.', false);
    if (key) signIn(key, false);
  });
  // A turn started in another tab of this browser: the list gains or
  // moves its conversation, and a tab idle on that conversation draws it
  // again and follows the reply, instead of going on without it.
  if (tabs) {
    tabs.addEventListener('message', (e) => {
      if (!state.api || !e.data) return;
      // Its hold, then its spend: the header says them, as GET /v1/me.
      if (e.data.session || e.data.ended) refreshMe();
      const id = e.data.session;
      if (typeof id !== 'string') return;
      refreshSessions();
      if (id !== state.sessionId || phase.phase !== Phase.idle || state.loading) return;
      // That turn answers or dismisses an open question: what the user
      // typed in it goes to the composer, unless that holds words.
      const typed = [...$('transcript').querySelectorAll('.interaction:not(.inactive) :is(input, textarea)')]
        .map((f) => f.value.trim()).filter(Boolean).join('\n');
      if (typed && $('input').value.trim() === '') {
        $('input').value = typed;
        autosize();
      }
      openSession(id);
    });
  }
  $('suggestions').replaceChildren(...SUGGESTIONS.map((s) => h('button', { type: 'button', class: 'suggestion', onclick: () => send(s) }, s)));
  drawIcons();
}

function boot() {
  wire();
  takeKeyFromURL(KEY);
  const key = localStorage.getItem(KEY);
  if (key) signIn(key, false);
  else showSignIn();
}

boot();
