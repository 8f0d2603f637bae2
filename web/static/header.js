// The parts of the page drawn from plain data: the token budget in the
// header, the list of conversations in the sidebar, the buttons' icons.

import { h, icon, relTime, formatTokens, formatUSD as usd } from './ui.js';

const $ = (id) => document.getElementById(id);

// renderBudget shows how much of the budget u (the signed-in user, or
// null: GET /v1/me's answer) has used, and apart from it what the turns
// under way hold (this page's, other tabs', an app's own loop's): held
// tokens are not spent, and go back to the budget as those turns settle.
export function renderBudget(u) {
  const box = $('budget');
  if (!u) { box.hidden = true; return; }
  const st = u.budget || {};
  const used = (typeof st.tokens_used === 'number' ? st.tokens_used : u.tokens_used) || 0;
  const held = st.tokens_reserved || 0;
  const budget = u.token_budget || 0;
  // No budget and nothing used yet: nothing worth a place in the header.
  box.hidden = budget <= 0 && used <= 0 && held <= 0;
  box.dataset.used = String(used);
  box.dataset.held = String(held);
  box.querySelector('.budget-bar').hidden = budget <= 0;
  const pct = budget > 0 ? Math.min(100, (used / budget) * 100) : 0;
  $('budget-fill').style.width = `${pct}%`;
  $('budget-held').style.width = `${budget > 0 ? Math.min(100 - pct, (held / budget) * 100) : 0}%`;
  // The colour warns of what remains: held is not spent, but a turn
  // that does not fit beside it is refused all the same.
  const taken = budget > 0 ? ((used + held) / budget) * 100 : 0;
  box.dataset.level = taken >= 95 ? 'danger' : taken >= 80 ? 'warn' : 'ok';
  // With --budget-unit usd the amounts are micro-dollars, not tokens.
  if (st.unit === 'usd') {
    $('budget-text').textContent = budget > 0 ? `${usd(used)} / ${usd(budget)}` : `${usd(used)} used`;
    box.title = (budget > 0 ? `${usd(used)} of ${usd(budget)} used this period` : `${usd(used)} used`) +
      (held > 0 ? `; ${usd(held)} held by replies under way` : '');
    return;
  }
  $('budget-text').textContent = budget > 0 ? `${formatTokens(used)} / ${formatTokens(budget)}` : `${formatTokens(used)} tokens used`;
  const heldText = held > 0 ? `; ${held.toLocaleString()} held by replies under way` : '';
  box.title = (budget > 0
    ? `${used.toLocaleString()} of ${budget.toLocaleString()} tokens used this period`
    : `${used.toLocaleString()} tokens used`) + heldText;
}

// renderSessions draws the conversation list, current marked, and the
// chat's title; withAgent names each conversation's coach (when there
// are several).
export function renderSessions(sessions, current, withAgent = false) {
  $('session-list').replaceChildren(...sessions.map((s) => h('li', {},
    h('a', {
      class: `session${s.id === current ? ' active' : ''}`, href: `#/${s.id}`, dataset: { id: s.id },
      'aria-current': s.id === current ? 'page' : false,
    },
    h('span', { class: 'session-title' }, s.title || 'New conversation'),
    h('span', { class: 'session-meta' },
      withAgent && s.agent ? h('span', { class: 'session-agent' }, s.agent) : null,
      relTime(s.updated_at),
      s.status && s.status !== 'active' ? h('span', { class: `status status-${s.status}` }, s.status) : null)))));
  $('session-empty').hidden = sessions.length > 0;
  const cur = sessions.find((s) => s.id === current);
  $('chat-title').textContent = cur ? cur.title || 'Conversation' : current ? 'Conversation' : 'New conversation';
}

// drawIcons puts the icons in the page's buttons: drawn here, so the
// markup stays readable.
export function drawIcons() {
  $('send').append(icon('send'));
  $('stop').append(icon('stop'));
  $('new-chat').append(icon('plus'), 'New conversation');
  $('sidebar-open').append(icon('menu'));
  $('sidebar-close').append(icon('close'));
  $('notes-close').append(icon('close'));
  $('signout').append(icon('logout'));
  $('notes-open').prepend(icon('notes'));
  document.querySelector('.add-note').prepend(icon('plus'));
}
