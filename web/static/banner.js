// Error banners: one clear message per error type, from an HTTP error
// (ApiError) or a stream `error` event ({type, message, retry_after}).

import { h, icon, formatUSD } from './ui.js';

// describeError maps an error to what the banner says and offers; unit
// is what the user's budget counts (GET /v1/me's budget.unit).
export function describeError(err, unit = 'tokens') {
  const type = err.code || err.type || 'internal';
  const retryAfter = Number(err.retryAfter ?? err.retry_after) || 0;
  const msg = err.message || '';
  switch (type) {
    case 'budget_exhausted': {
      // No budget at all (token_budget 0; a free preview used up):
      // nothing is used up that a new period gives back.
      if (/no token budget/.test(msg)) {
        return { type, title: 'No budget', text: 'This account has no budget for the coach. Ask your administrator for one.' };
      }
      const later = 'Ask your administrator for more, or come back when it resets.';
      // A turn is refused when its estimate does not fit what is left,
      // which may be much: then the budget is not used up.
      const left = Number(err.remaining) || 0;
      const need = Number(err.estimated_tokens) || 0;
      if (left > 0 && unit === 'usd') {
        const text = need > left
          ? `This reply may cost about ${formatUSD(need)} and only ${formatUSD(left)} is left in your budget for this period.`
          : `Only ${formatUSD(left)} is left in your budget for this period, not enough for this reply.`;
        return { type, title: 'Not enough budget left', text: `${text} ${later}` };
      }
      if (left > 0) {
        const text = need > left
          ? `This reply needs about ${need.toLocaleString()} tokens and only ${left.toLocaleString()} are left in your budget for this period.`
          : `Only ${left.toLocaleString()} tokens are left in your budget for this period, not enough for this reply.`;
        return { type, title: 'Not enough budget left', text: `${text} ${later}` };
      }
      if (unit === 'usd') return { type, title: 'Budget used up', text: `You have used all the money in your budget for this period. ${later}` };
      return { type, title: 'Token budget used up', text: `You have used all the tokens in your budget for this period. ${later}` };
    }
    case 'rate_limit_exceeded':
      // The monthly message limit is an allowance used up, not a rate
      // to wait out: more come with the month (retry_after says when).
      if (/^Monthly message limit/.test(msg)) {
        const when = retryAfter > 0 ? new Date(Date.now() + retryAfter * 1000).toLocaleDateString(undefined, { month: 'long', day: 'numeric' }) : '';
        return { type, title: 'Monthly message limit reached', text: `You have sent all the messages you have this month.${when ? ` More come on ${when}.` : ''}` };
      }
      return { type, title: 'Slow down a little', text: 'You have sent a lot of messages in a short time.', countdown: retryAfter || 30 };
    case 'rate_limit':
      return { type, title: 'The coach is busy', text: 'The AI service is under heavy load right now. Try again in a few seconds.', retry: true };
    case 'turn_in_progress':
      return { type, title: 'A reply is still being written', text: 'This conversation is already answering (maybe in another tab). Wait for it to finish, then send again.' };
    case 'timeout':
      return { type, title: 'That took too long', text: msg || 'The reply ran out of time.', retry: true };
    case 'api_error':
      return { type, title: 'The AI service had a problem', text: msg || 'Something went wrong upstream.', retry: true };
    case 'unavailable':
      // The server's message is for operators (the database, an event id).
      return { type, title: 'The coach is briefly unavailable', text: 'Your conversation is safe. Try again in a moment.', retry: true };
    case 'network':
      return { type, title: 'Connection problem', text: msg, retry: true };
    case 'invalid_request':
    case 'conflict':
      return { type, title: 'That could not be sent', text: msg || 'The request was not valid.' };
    case 'not_found':
      return { type, title: 'Not found', text: msg };
    case 'internal': {
      // The text of an internal error is not for users, but the request
      // id the server gives is what they quote when reporting it.
      const id = (msg.match(/request id ([\w-]+)/) || [])[1];
      const text = 'An unexpected error happened. Please try again.';
      return { type, title: 'Something went wrong', text: id ? `${text} If it keeps happening, quote request id ${id}.` : text, retry: true };
    }
    default:
      return { type, title: 'Something went wrong', text: msg || 'An unexpected error happened. Please try again.', retry: true };
  }
}

export class Banner {
  // onFocusLost() gives the focus somewhere when the banner goes with
  // it (its Dismiss or Retry pressed from the keyboard).
  constructor(host, { onRetry = () => {}, onFocusLost = () => {} } = {}) {
    this.host = host;
    this.onRetry = onRetry;
    this.onFocusLost = onFocusLost;
    this.timer = null;
  }

  clear() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const focused = this.host.contains(document.activeElement);
    this.host.replaceChildren();
    if (focused) this.onFocusLost();
  }

  show(d) {
    this.clear();
    const text = h('p', { class: 'banner-text' }, d.text);
    const actions = h('div', { class: 'banner-actions' });
    const el = h('div', { class: 'banner', role: 'alert', dataset: { type: d.type } },
      icon('alert', 'icon banner-icon'),
      h('div', { class: 'banner-main' }, h('strong', { class: 'banner-title' }, d.title), text),
      actions);
    if (d.countdown) {
      const until = Date.now() + d.countdown * 1000;
      const when = h('span', { class: 'banner-when' });
      text.append(' ', when);
      const tick = () => {
        const left = Math.ceil((until - Date.now()) / 1000);
        if (left > 0) {
          when.textContent = `Try again in ${left}s.`;
          return;
        }
        when.textContent = 'You can send again now.';
        clearInterval(this.timer);
        this.timer = null;
      };
      tick();
      this.timer = setInterval(tick, 1000);
    }
    if (d.retry) {
      const btn = h('button', { type: 'button', class: 'btn small banner-retry' }, 'Retry');
      btn.addEventListener('click', () => { this.clear(); this.onRetry(); });
      actions.append(btn);
    }
    const close = h('button', { type: 'button', class: 'icon-btn banner-close', 'aria-label': 'Dismiss' }, icon('close'));
    close.addEventListener('click', () => this.clear());
    actions.append(close);
    this.host.append(el);
  }
}
