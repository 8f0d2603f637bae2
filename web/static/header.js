// The parts of the page drawn from plain data: the token budget in the
// header, the list of conversations in the sidebar, the buttons' icons.

import { h, icon, relTime, formatTokens } from './ui.js';

const $ = (id) => document.getElementById(id);

// usedAfter is the user's tokens_used after a usage event of the running
// turn, which began at turnBase.
export function usedAfter(user, u, turnBase) {
  const budget = user.token_budget;
  if (typeof u.budget_remaining === 'number' && budget > 0) return Math.max(0, budget - u.budget_remaining);
  if (typeof u.tokens_used === 'number') return turnBase + u.tokens_used;
  return user.tokens_used;
}

// renderBudget shows how much of the budget u (the signed-in user, or
// null) has used.
export function renderBudget(u) {
  const box = $('budget');
  if (!u) { box.hidden = true; return; }
  const used = u.tokens_used || 0;
  const budget = u.token_budget || 0;
  // No budget and nothing used yet: nothing worth a place in the header.
  box.hidden = budget <= 0 && used <= 0;
  box.querySelector('.budget-bar').hidden = budget <= 0;
  const pct = budget > 0 ? Math.min(100, (used / budget) * 100) : 0;
  $('budget-fill').style.width = `${pct}%`;
  box.dataset.level = pct >= 95 ? 'danger' : pct >= 80 ? 'warn' : 'ok';
  $('budget-text').textContent = budget > 0 ? `${formatTokens(used)} / ${formatTokens(budget)}` : `${formatTokens(used)} tokens used`;
  box.title = budget > 0
    ? `${used.toLocaleString()} of ${budget.toLocaleString()} tokens used this period`
    : `${used.toLocaleString()} tokens used`;
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
