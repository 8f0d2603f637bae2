// Interactive (split-conversation) tools: the model asks, the turn pauses,
// the user's answer resumes it. The answers follow the server's result
// schemas (tools/pulse.go, tools/interactive.go), which validate them: the
// browser test answers a real pulse check through them.

import { h } from './ui.js';

// answers builds the tool_result content of each interactive tool.
export const answers = {
  show_options: (choice) => choice,
  // ratings: [{domain, rating 1-5}], one per domain the model asked about.
  show_pulse_check: (ratings, note) => (note ? { ratings, note } : { ratings }),
  other: (text) => text,
  // approval answers a call that waits for the user's approval.
  approval: (approved, reason) => (reason ? { approved, reason } : { approved }),
};

export function isInteractive(name) {
  return name === 'show_options' || name === 'show_pulse_check';
}

// answerLabel is what the user's answer reads like in the transcript.
export function answerLabel(name, content) {
  let v = content;
  if (typeof v === 'string') {
    try { v = JSON.parse(v); } catch { /* a plain string answer */ }
  }
  if (Array.isArray(v)) v = v.map((b) => (b && b.text) || '').join('');
  if (typeof v === 'string') {
    try { const inner = JSON.parse(v); if (inner && typeof inner === 'object') v = inner; } catch { /* plain text */ }
  }
  if (v && typeof v === 'object' && Array.isArray(v.ratings)) {
    const r = v.ratings.map((x) => (v.ratings.length === 1 && x.domain === OVERALL ? `${x.rating}/5` : `${x.domain} ${x.rating}/5`));
    return `Rated ${r.join(', ')}${v.note ? ` — ${v.note}` : ''}`;
  }
  if (v && typeof v === 'object' && 'rating' in v) { // answers stored before ratings
    return `Rated ${v.rating}/5${v.note ? ` — ${v.note}` : ''}`;
  }
  return typeof v === 'string' ? v : JSON.stringify(v);
}

// EXPIRED is what a question past its expiry says.
export const EXPIRED = 'This question has expired. Send a message to go on.';

// NOT_OPEN is what a question says once the server refused an answer to
// it: it was answered elsewhere (then the answer shows), or expired.
export const NOT_OPEN = 'This question is no longer open. Send a message to go on.';

// OVERALL is the one domain rated when the model named none.
const OVERALL = 'overall';

const RATINGS = [
  [1, 'Rough'], [2, 'Meh'], [3, 'Okay'], [4, 'Good'], [5, 'Great'],
];

// renderInteraction draws the controls for one interactive call.
// opts.onAnswer(toolUseId, content, label) resolves true once the answer
// was accepted (the resumed stream started) and false when it was not, in
// which case the controls come back. A submitted flag, set synchronously
// before anything else, makes a second submission impossible however fast
// the clicks come. opts.inactive draws it as history, without controls;
// opts.expiresAt (the pending record's) closes it at its expiry.
// opts.onClosed(typed) runs when it closes with the focus in it.
export function renderInteraction(data, opts = {}) {
  const input = data.input || {};
  const prompt = data.approval ? data.reason || `${data.name} needs your approval` : input.prompt || input.context || input.question || '';
  const box = h('div', { class: data.approval ? 'interaction approval' : 'interaction', dataset: { tool: data.name, id: data.tool_use_id } });
  if (prompt) box.append(h('p', { class: 'interaction-prompt' }, prompt));
  let submitted = Boolean(opts.inactive);
  const controls = [];

  const submit = async (content, label, chosen) => {
    if (submitted) return;
    submitted = true;
    box.classList.add('submitted');
    controls.forEach((c) => { c.disabled = true; });
    if (chosen) chosen.classList.add('chosen');
    const ok = opts.onAnswer ? await opts.onAnswer(data.tool_use_id, content, label) : false;
    if (!ok) {
      submitted = false;
      box.classList.remove('submitted');
      controls.forEach((c) => { c.disabled = false; });
      if (chosen) chosen.classList.remove('chosen');
    } else {
      box.classList.add('answered');
    }
  };

  if (data.approval) {
    // A call waiting for approval: what would run, and Approve / Deny.
    box.append(h('div', { class: 'approval-call' },
      h('code', { class: 'approval-tool' }, data.name),
      h('pre', { class: 'tool-pre approval-input' }, JSON.stringify(input, null, 2))));
    const reason = h('input', { class: 'input approval-reason', placeholder: 'Reason (optional)', maxlength: 1000 });
    const approve = h('button', { type: 'button', class: 'btn primary approve', dataset: { value: 'Approved' } }, 'Approve');
    const deny = h('button', { type: 'button', class: 'btn deny', dataset: { value: 'Denied' } }, 'Deny');
    approve.addEventListener('click', () => submit(answers.approval(true, reason.value.trim()), 'Approved', approve));
    deny.addEventListener('click', () => {
      const why = reason.value.trim();
      submit(answers.approval(false, why), why ? `Denied: ${why}` : 'Denied', deny);
    });
    controls.push(reason, approve, deny);
    box.append(h('div', { class: 'approval-actions' }, reason, approve, deny));
  } else if (data.name === 'show_options') {
    const pills = h('div', { class: 'pills', role: 'group', 'aria-label': prompt || 'Options' });
    // The input is the model's: in history it is stored as sent, even
    // when the server refused it, so it may not be a list of strings.
    const options = Array.isArray(input.options) ? input.options.map(String) : [];
    for (const opt of options) {
      const b = h('button', { type: 'button', class: 'pill', dataset: { value: opt } }, opt);
      b.addEventListener('click', () => submit(answers.show_options(opt), opt, b));
      pills.append(b);
      controls.push(b);
    }
    box.append(pills);
  } else if (data.name === 'show_pulse_check') {
    const domains = Array.isArray(input.domains) && input.domains.length ? input.domains.map(String) : [OVERALL];
    const picked = new Map();
    const note = h('textarea', { class: 'pulse-note', rows: 2, maxlength: 1000, placeholder: 'Anything to add? (optional)' });
    const send = h('button', { type: 'submit', class: 'btn primary', disabled: true }, 'Send');
    const rows = domains.map((domain) => {
      const scale = h('div', { class: 'rating', role: 'radiogroup', 'aria-label': domain === OVERALL ? 'Rating' : domain, dataset: { domain } });
      // A radio group: one stop of Tab (the rating picked, else the
      // first), the arrows move the rating.
      for (const [n, word] of RATINGS) {
        const b = h('button', { type: 'button', class: 'rate', role: 'radio', 'aria-checked': 'false', tabindex: n === 1 ? 0 : -1, dataset: { value: n } },
          h('strong', {}, String(n)), h('span', {}, word));
        b.addEventListener('click', () => {
          if (submitted) return;
          picked.set(domain, n);
          scale.querySelectorAll('.rate').forEach((x) => {
            x.setAttribute('aria-checked', String(x === b));
            x.tabIndex = x === b ? 0 : -1;
          });
          send.disabled = picked.size < domains.length;
        });
        scale.append(b);
        controls.push(b);
      }
      scale.addEventListener('keydown', (e) => {
        const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[e.key];
        if (!step || submitted) return;
        e.preventDefault();
        const all = [...scale.querySelectorAll('.rate')];
        const next = all[(all.indexOf(document.activeElement) + step + all.length) % all.length];
        next.focus();
        next.click();
      });
      return domain === OVERALL ? scale : h('div', { class: 'rating-row' }, h('span', { class: 'rating-domain' }, domain), scale);
    });
    controls.push(note, send);
    const form = h('form', { class: 'pulse' }, ...rows, note, h('div', { class: 'pulse-actions' }, send));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      if (picked.size < domains.length) return;
      const text = note.value.trim();
      const content = answers.show_pulse_check(domains.map((domain) => ({ domain, rating: picked.get(domain) })), text);
      submit(content, answerLabel('show_pulse_check', content), null);
    });
    box.append(form);
  } else {
    const field = h('input', { class: 'input', placeholder: 'Your answer', maxlength: 2000 });
    const send = h('button', { type: 'submit', class: 'btn primary' }, 'Send');
    controls.push(field, send);
    const form = h('form', { class: 'generic-answer' }, field, send);
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const v = field.value.trim();
      if (v) submit(answers.other(v), v, null);
    });
    box.append(form);
  }
  if (submitted) controls.forEach((c) => { c.disabled = true; });
  if (opts.inactive) box.classList.add('inactive');

  // markClosed shows a question that can no longer be answered (it
  // expired, or was answered elsewhere): no live controls, and why.
  // One closed under the user's hands (the focus in it) hands what they
  // typed in it to opts.onClosed, which gives them somewhere to go on.
  box.markClosed = (why) => {
    const typing = box.contains(document.activeElement);
    submitted = true;
    box.classList.add('inactive', 'closed');
    controls.forEach((c) => { c.disabled = true; });
    if (!box.querySelector('.interaction-note')) box.append(h('p', { class: 'interaction-note' }, why));
    if (typing && opts.onClosed) {
      opts.onClosed([...box.querySelectorAll('input, textarea')].map((f) => f.value.trim()).filter(Boolean).join('\n'));
    }
  };
  // A live question closes when it expires, while it is on screen too.
  const left = Date.parse(opts.expiresAt || '') - Date.now();
  if (!submitted && left <= 0) box.markClosed(EXPIRED);
  else if (!submitted && left < 2 ** 31 - 1) setTimeout(() => { if (!submitted) box.markClosed(EXPIRED); }, left);

  // markAnswered shows a stored answer: the chosen pill stays marked.
  box.markAnswered = (label) => {
    submitted = true;
    box.classList.add('answered', 'inactive');
    controls.forEach((c) => { c.disabled = true; });
    box.querySelectorAll('.pill, .approval-actions .btn').forEach((p) => {
      if (p.dataset.value === label || (label && label.startsWith(`${p.dataset.value}:`))) p.classList.add('chosen');
    });
  };
  return box;
}
