// A small, safe Markdown renderer for model text. It never parses HTML:
// every character of the source ends up in a text node, and the only
// elements are the ones built here (p, strong, em, code, pre, ul, ol, li,
// h3, h4, blockquote, a, br, table and its parts). Links keep only http
// and https URLs.
//
// Supported: paragraphs, line breaks, # headings, - * + and 1. lists,
// > quotes, ``` fences (an unclosed fence runs to the end, which is what a
// stream in progress looks like), GitHub-style | tables |, `code`,
// **bold**, __bold__, *italic*, _italic_, [text](url) and bare http(s)
// URLs.

// MAX_DEPTH bounds nested quotes: deeper levels are shown as plain text,
// so a reply of 5,000 '>' cannot overflow the stack (issue 20 finding 14).
export const MAX_DEPTH = 20;

// renderSafe renders src, falling back to its plain text if the renderer
// fails: a message is always shown, never a broken transcript.
export function renderSafe(src, doc = document) {
  try {
    return renderMarkdown(src, doc);
  } catch (err) {
    console.error('coachd: markdown fallback', err);
    const frag = doc.createDocumentFragment();
    const p = doc.createElement('p');
    p.textContent = String(src ?? '');
    frag.append(p);
    return frag;
  }
}

export function renderMarkdown(src, doc = document, depth = 0) {
  const frag = doc.createDocumentFragment();
  const lines = String(src ?? '').replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    const fence = fenceOf(line);
    if (fence) {
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence.marker)) body.push(lines[i++]);
      i++; // the closing fence
      const pre = doc.createElement('pre');
      const code = doc.createElement('code');
      if (fence.lang) code.dataset.lang = fence.lang;
      code.textContent = body.join('\n');
      pre.append(code);
      frag.append(pre);
      continue;
    }
    if (line.trim() === '') {
      i++;
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      const h = doc.createElement(heading[1].length <= 2 ? 'h3' : 'h4');
      inline(h, heading[2], doc);
      frag.append(h);
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
      const q = doc.createElement('blockquote');
      if (depth < MAX_DEPTH) {
        q.append(renderMarkdown(body.join('\n'), doc, depth + 1));
      } else {
        q.append(el(doc, 'p', body.join('\n')));
      }
      frag.append(q);
      continue;
    }
    const table = tableAt(lines, i);
    if (table) {
      i = renderTable(frag, lines, i, table, doc);
      continue;
    }
    const item = listItem(line);
    if (item) {
      const list = doc.createElement(item.ordered ? 'ol' : 'ul');
      if (item.ordered && item.start !== 1) list.start = item.start;
      while (i < lines.length) {
        const it = listItem(lines[i]);
        if (!it || it.ordered !== item.ordered) break;
        const li = doc.createElement('li');
        let text = it.text;
        i++;
        // Indented lines continue the item.
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !listItem(lines[i])) text += '\n' + lines[i++].trim();
        inline(li, text, doc);
        list.append(li);
      }
      frag.append(list);
      continue;
    }
    // The first line is the paragraph's whatever it looks like: every
    // block above refused it, and a line no block takes must still be
    // consumed, or this loop would never end.
    const para = [lines[i++]];
    while (i < lines.length && lines[i].trim() !== '' && !startsBlock(lines[i]) && !tableAt(lines, i)) para.push(lines[i++]);
    const p = doc.createElement('p');
    inline(p, para.join('\n'), doc);
    frag.append(p);
  }
  return frag;
}

function listItem(line) {
  let m = line.match(/^\s{0,3}[-*+]\s+(.*)$/);
  if (m) return { ordered: false, text: m[1] };
  m = line.match(/^\s{0,3}(\d{1,9})[.)]\s+(.*)$/);
  if (m) return { ordered: true, start: Number(m[1]), text: m[2] };
  return null;
}

// HEADING is a # heading; [\s\S] so that a U+2028 in it (which "." does
// not match) cannot make a line start a block that no block takes.
const HEADING = /^(#{1,6})\s+([\s\S]*)$/;

// fenceOf reads an opening fence: ``` or ~~~, then an info string whose
// first word is the language (```js title="a.js" is a fence too). As in
// CommonMark, a backtick fence's info string holds no backtick, so
// ```npm install``` is text.
function fenceOf(line) {
  const m = line.match(/^\s*(```|~~~)([\s\S]*)$/);
  if (!m || (m[1] === '```' && m[2].includes('`'))) return null;
  const lang = m[2].trim().split(/\s+/)[0];
  return { marker: m[1], lang: /^[\w+-]+$/.test(lang) ? lang : '' };
}

// startsBlock reports whether a line ends the paragraph before it: the
// same tests the blocks themselves make.
function startsBlock(line) {
  return fenceOf(line) !== null || HEADING.test(line) || /^\s*>/.test(line) || listItem(line) !== null;
}

// MAX_COLUMNS bounds a table's width: a header row of more cells is not
// taken for a table (it stays a paragraph), so a reply of 10,000 pipes
// cannot make 10,000 columns.
export const MAX_COLUMNS = 64;

// cellsOf splits a table row at its pipes: the outer ones are optional,
// and an escaped pipe (\|) is a pipe in the cell, as on GitHub.
function cellsOf(line) {
  let s = line.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const cells = [];
  let cell = '';
  for (let k = 0; k < s.length; k++) {
    if (s[k] === '\\' && s[k + 1] === '|') { cell += '|'; k++; continue; }
    if (s[k] === '|') { cells.push(cell.trim()); cell = ''; continue; }
    cell += s[k];
  }
  cells.push(cell.trim());
  return cells;
}

const DELIMITER = /^:?-+:?$/;

// tableAt reads a table starting at lines[i]: a header row holding a pipe,
// then a delimiter row (---, :--, :-:, --:) of as many cells. It returns
// the columns' alignments, or null.
function tableAt(lines, i) {
  if (i + 1 >= lines.length || !lines[i].includes('|') || !lines[i + 1].includes('-')) return null;
  const head = cellsOf(lines[i]);
  const delim = cellsOf(lines[i + 1]);
  if (head.length > MAX_COLUMNS || delim.length !== head.length || !delim.every((d) => DELIMITER.test(d))) return null;
  return delim.map((d) => {
    if (d.startsWith(':') && d.endsWith(':')) return 'center';
    if (d.endsWith(':')) return 'right';
    return d.startsWith(':') ? 'left' : '';
  });
}

// renderTable appends the table at lines[i] and returns the index after
// it. Its rows run to a blank line, a line with no pipe or one that
// starts another block; a short row is filled, a long one cut.
function renderTable(frag, lines, i, align, doc) {
  const row = (line, tag) => {
    const tr = doc.createElement('tr');
    const cells = cellsOf(line);
    align.forEach((a, k) => {
      const c = doc.createElement(tag);
      if (a) c.dataset.align = a;
      inline(c, cells[k] || '', doc);
      tr.append(c);
    });
    return tr;
  };
  const table = doc.createElement('table');
  const head = doc.createElement('thead');
  head.append(row(lines[i], 'th'));
  const body = doc.createElement('tbody');
  i += 2;
  while (i < lines.length && lines[i].includes('|') && lines[i].trim() !== '' && !startsBlock(lines[i])) body.append(row(lines[i++], 'td'));
  table.append(head);
  if (body.childElementCount > 0) table.append(body);
  // The wrapper scrolls a table wider than the column, on a phone too.
  const wrap = doc.createElement('div');
  wrap.className = 'table-wrap';
  wrap.append(table);
  frag.append(wrap);
  return i;
}

// INLINE_MAX bounds how far an inline token may reach: its closing mark,
// a link's end, are looked for this far ahead at most. Unbounded, every
// '[' or '**' of a line without its end scanned the rest of the line, and
// 100,000 '[' took seconds to draw; longer tokens stay plain text.
export const INLINE_MAX = 4096;

// Inline tokens, tried in this order at each position.
const INLINE = [
  { re: /^`([^`\n]+)`/, make: (m, doc) => el(doc, 'code', m[1]) },
  { re: /^\*\*(?=\S)([\s\S]*?\S)\*\*/, make: (m, doc) => nest(doc, 'strong', m[1]) },
  { re: /^__(?=\S)([\s\S]*?\S)__(?![\w])/, make: (m, doc) => nest(doc, 'strong', m[1]) },
  { re: /^\*(?=[^\s*])([^*\n]*?[^\s*])\*/, make: (m, doc) => nest(doc, 'em', m[1]) },
  { re: /^_(?=[^\s_])([^_\n]*?[^\s_])_(?![\w])/, make: (m, doc) => nest(doc, 'em', m[1]) },
  { re: /^\[([^\]\n]+)\]\(\s*([^)\s]+)\s*\)/, make: (m, doc) => link(doc, m[1], m[2]) },
  { re: /^https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"]/, make: (m, doc) => link(doc, null, m[0]) },
];

// inline appends the inline content of text to parent.
export function inline(parent, text, doc = document) {
  let plain = '';
  const flush = () => {
    if (!plain) return;
    const parts = plain.split('\n');
    parts.forEach((part, k) => {
      if (k > 0) parent.append(doc.createElement('br'));
      if (part) parent.append(doc.createTextNode(part));
    });
    plain = '';
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    // Only look for a token where one can start, and never inside a word
    // for _ (snake_case stays as it is).
    if ('`*_[h'.includes(c) && !(c === '_' && i > 0 && /\w/.test(text[i - 1])) &&
        !(c === 'h' && i > 0 && /\w/.test(text[i - 1]))) {
      const rest = text.slice(i, i + INLINE_MAX);
      let done = false;
      for (const tok of INLINE) {
        const m = rest.match(tok.re);
        if (!m) continue;
        const node = tok.make(m, doc);
        if (!node) continue;
        flush();
        parent.append(node);
        i += m[0].length;
        done = true;
        break;
      }
      if (done) continue;
    }
    if (c === '\\' && i + 1 < text.length && /[\\`*_[\]()#>-]/.test(text[i + 1])) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    plain += c;
    i++;
  }
  flush();
}

function el(doc, tag, text) {
  const e = doc.createElement(tag);
  e.textContent = text;
  return e;
}

function nest(doc, tag, text) {
  const e = doc.createElement(tag);
  inline(e, text, doc);
  return e;
}

// safeURL returns the URL when it is absolute http(s), else null.
export function safeURL(raw) {
  try {
    const u = new URL(raw);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null;
  } catch {
    return null;
  }
}

function link(doc, label, raw) {
  const href = safeURL(raw);
  if (!href) {
    // Not a link we allow: show the text, never a live href.
    return label === null ? null : doc.createTextNode(label);
  }
  const a = doc.createElement('a');
  a.href = href;
  a.target = '_blank';
  a.rel = 'noopener noreferrer nofollow';
  if (label === null) a.textContent = raw;
  else inline(a, label, doc);
  return a;
}
