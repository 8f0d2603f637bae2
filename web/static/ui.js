// DOM helpers. Text always goes in through text nodes: nothing here (or
// anywhere in the UI) assigns HTML strings.

// h creates an element: h('button', {class: 'x', onclick: f, dataset: {id}},
// 'text', child, …). Props starting with "on" are listeners; class, text,
// dataset and hidden are special; everything else is an attribute (false
// and null leave it out).
export function h(tag, props = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'hidden') e.hidden = Boolean(v);
    else if (k === 'value') e.value = v;
    else if (k.startsWith('on') && typeof v === 'function') e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  append(e, children);
  return e;
}

function append(e, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(e, c);
    else e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Icons are our own static path data (24×24, stroked).
const ICONS = {
  send: ['M5 12h13', 'M13 6l6 6-6 6'],
  stop: ['M7 7h10v10H7z'],
  plus: ['M12 5v14', 'M5 12h14'],
  menu: ['M4 7h16', 'M4 12h16', 'M4 17h16'],
  close: ['M6 6l12 12', 'M18 6L6 18'],
  notes: ['M6 3h9l4 4v14H6z', 'M14 3v5h5', 'M9 13h7', 'M9 17h5'],
  pin: ['M9 4h6l-1 6 3 3H7l3-3z', 'M12 13v7'],
  edit: ['M4 20h4L19 9l-4-4L4 16z', 'M13 7l4 4'],
  trash: ['M5 7h14', 'M10 7V4h4v3', 'M7 7l1 13h8l1-13'],
  undo: ['M9 14L4 9l5-5', 'M4 9h10a6 6 0 010 12h-3'],
  tool: ['M14 6a4 4 0 00-5 5l-5 5 3 3 5-5a4 4 0 005-5l-2 2-3-3z'],
  check: ['M5 13l4 4L19 7'],
  alert: ['M12 4l9 16H3z', 'M12 10v4', 'M12 17v.5'],
  chat: ['M5 5h14v10H9l-4 4z'],
  logout: ['M15 4h4v16h-4', 'M10 8l-4 4 4 4', 'M6 12h10'],
  spark: ['M12 3v4', 'M12 17v4', 'M3 12h4', 'M17 12h4', 'M6 6l2.5 2.5', 'M15.5 15.5L18 18', 'M18 6l-2.5 2.5', 'M8.5 15.5L6 18'],
};

const SVG = 'http://www.w3.org/2000/svg';

export function icon(name, cls = 'icon') {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', cls);
  svg.setAttribute('aria-hidden', 'true');
  for (const d of ICONS[name] || []) {
    const p = document.createElementNS(SVG, 'path');
    p.setAttribute('d', d);
    svg.append(p);
  }
  return svg;
}

// relTime says when, briefly: "just now", "5m", "3h", "2d", or a date.
export function relTime(iso, now = Date.now()) {
  const t = Date.parse(iso);
  if (!t) return '';
  const s = Math.max(0, (now - t) / 1000);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  if (s < 7 * 86400) return `${Math.round(s / 86400)}d ago`;
  return new Date(t).toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

// humanize turns a tool name into words: save_note → "Save note".
export function humanize(name) {
  const s = String(name || 'tool').replace(/[_-]+/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

export function formatTokens(n) {
  n = Number(n) || 0;
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

// formatUSD writes micro-dollars (a --budget-unit usd amount) as
// dollars: cents, or to a hundredth of a cent below one.
export function formatUSD(micro) {
  micro = Number(micro) || 0;
  return `$${(micro / 1e6).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: micro > 0 && micro < 1e4 ? 4 : 2 })}`;
}

// toast shows a short message at the bottom of the screen.
export function toast(text, kind = 'info') {
  const host = document.getElementById('toasts');
  if (!host) return;
  const t = h('div', { class: `toast toast-${kind}`, role: 'status' }, text);
  host.append(t);
  setTimeout(() => t.classList.add('leaving'), 4200);
  setTimeout(() => t.remove(), 4600);
}
