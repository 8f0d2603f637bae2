// Browser unit tests for the UI's pure modules. js_test.go loads this file
// into a page served by web.Handler() and runs every test; each returns
// nothing or throws. It runs from a blob: URL, so module paths are made
// absolute.
const at = (p) => new URL(p, location.href).href;
const { SSEParser, StreamPhase, TextBatcher, MIN_SHIMMER_MS } = await import(at('/assets/stream.js'));
const { renderMarkdown, renderSafe, safeURL, MAX_DEPTH, INLINE_MAX, MAX_COLUMNS } = await import(at('/assets/markdown.js'));
const { answers, answerLabel } = await import(at('/assets/interactions.js'));
const { sortNotes } = await import(at('/assets/notes.js'));
const { describeError } = await import(at('/assets/banner.js'));
const { chatKey, chatAnswered, newKey } = await import(at('/assets/api.js'));

const eq = (got, want, what) => {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) throw new Error(`${what}: got ${g}, want ${w}`);
};
const parseAll = (chunks) => {
  const p = new SSEParser();
  const out = [];
  for (const c of chunks) out.push(...p.push(c));
  out.push(...p.end());
  return out.map((e) => [e.event, e.data]);
};
const html = (frag) => { const d = document.createElement('div'); d.append(frag); return d; };

// A fake clock for the phase machine.
function fakeClock() {
  const c = { t: 0, timers: [] };
  c.now = () => c.t;
  c.setTimeout = (f, ms) => { const id = { f, at: c.t + ms }; c.timers.push(id); return id; };
  c.clearTimeout = (id) => { c.timers = c.timers.filter((x) => x !== id); };
  c.advance = (ms) => {
    c.t += ms;
    for (const id of c.timers.filter((x) => x.at <= c.t)) { c.timers = c.timers.filter((x) => x !== id); id.f(); }
  };
  return c;
}

export const tests = {
  'sse/basic': () => eq(parseAll(['event: content_delta\ndata: {"text":"hi"}\n\n']), [['content_delta', '{"text":"hi"}']], 'frames'),
  'sse/split anywhere': () => {
    const src = 'event: a\ndata: 1\n\nevent: b\ndata: 2\n\n';
    for (let i = 0; i <= src.length; i++) {
      eq(parseAll([src.slice(0, i), src.slice(i)]), [['a', '1'], ['b', '2']], `split at ${i}`);
    }
    eq(parseAll(src.split('')), [['a', '1'], ['b', '2']], 'one char per chunk');
  },
  'sse/crlf and cr': () => {
    eq(parseAll(['event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\r']), [['a', '1'], ['b', '2']], 'line ends');
    eq(parseAll(['event: a\r', '\ndata: 1\r', '\n\r', '\n']), [['a', '1']], 'CRLF split across chunks');
  },
  'sse/comments are heartbeats': () => {
    const p = new SSEParser();
    eq(p.push(': ping\n\n:\n').length, 0, 'events from comments');
    eq(p.comments, 2, 'comments counted');
    eq(p.push('data: x\n\n').map((e) => e.event), ['message'], 'unnamed event');
  },
  'sse/multi-line data and field rules': () => {
    eq(parseAll(['data: one\ndata:two\ndata\n\n']), [['message', 'one\ntwo\n']], 'data lines');
    eq(parseAll(['data:  two spaces\n\n']), [['message', ' two spaces']], 'one space removed');
    eq(parseAll(['event: x\nretry: 5\nid: 7\nfoo: bar\n\n']), [], 'no data, no event');
    eq(parseAll(['event: x\ndata: y']), [['x', 'y']], 'unterminated final event');
  },
  'sse/utf8 across chunks': async () => {
    const bytes = new TextEncoder().encode('id: 3:7\nevent: content_delta\ndata: {"text":"héllo — 👋"}\n\n');
    const { readEvents } = await import(at('/assets/stream.js'));
    const body = new ReadableStream({ start(c) { for (const b of bytes) c.enqueue(new Uint8Array([b])); c.close(); } });
    const got = [];
    for await (const ev of readEvents(body)) got.push(ev);
    eq(got, [{ event: 'content_delta', data: { text: 'héllo — 👋' }, id: '3:7' }], 'decoded, with its id');
  },
  'phase/tool round trip': () => {
    const c = fakeClock();
    const seen = [];
    const p = new StreamPhase((s) => seen.push(`${s.phase}:${s.shimmer ? 1 : 0}`), c);
    eq(p.begin(), true, 'begin');
    eq(p.begin(), false, 'second begin refused');
    p.toolStarted('a', 'save_note');
    c.advance(50);
    p.toolFinished('a');
    eq(p.phase, 'streaming', 'phase after the tool');
    eq(p.shimmer, true, 'shimmer held for the minimum');
    c.advance(MIN_SHIMMER_MS - 51);
    eq(p.shimmer, true, 'shimmer just before 200 ms');
    c.advance(1);
    eq(p.shimmer, false, 'shimmer at 200 ms');
    p.complete();
    p.finish();
    eq(seen, ['streaming:0', 'toolExecuting:1', 'streaming:1', 'streaming:0', 'completing:0', 'idle:0'], 'changes');
  },
  'phase/the hold counts from the drawing': () => {
    // onChange draws the shimmer; a busy page may take a while to do it.
    const c = fakeClock();
    const p = new StreamPhase((s) => { if (s.phase === 'toolExecuting') c.advance(30); }, c);
    p.begin();
    p.toolStarted('a', 'save_note');
    p.toolFinished('a');
    c.advance(MIN_SHIMMER_MS - 1);
    eq(p.shimmer, true, 'still on 199 ms after it was drawn');
    c.advance(1);
    eq(p.shimmer, false, 'off 200 ms after it was drawn');
  },
  'phase/parallel tools keep the shimmer': () => {
    const c = fakeClock();
    const p = new StreamPhase(() => {}, c);
    p.begin();
    p.toolStarted('a', 'x'); p.toolStarted('b', 'y'); p.toolStarted('c', 'z');
    eq(p.tools, 3, 'counted');
    c.advance(500);
    p.toolFinished('a'); p.toolFinished('b');
    eq([p.phase, p.shimmer], ['toolExecuting', true], 'one left');
    p.toolFinished('c');
    eq([p.phase, p.shimmer], ['streaming', false], 'all done after 500 ms');
  },
  'phase/a new tool within the hold keeps one shimmer': () => {
    const c = fakeClock();
    const p = new StreamPhase(() => {}, c);
    p.begin();
    p.toolStarted('a', 'x'); p.toolFinished('a');
    c.advance(100);
    p.toolStarted('b', 'y');
    c.advance(200);
    eq(p.shimmer, true, 'still on while b runs');
    p.roundBoundary();
    eq([p.phase, p.shimmer, p.tools], ['streaming', false, 0], 'round boundary clears');
  },
  'phase/always back to idle': () => {
    const p = new StreamPhase(() => {}, fakeClock());
    p.begin(); p.toolStarted('a', 'x');
    p.finish(); // an abort in the middle of a tool
    eq([p.phase, p.tools], ['idle', 0], 'after abort');
    eq(p.begin(), true, 'a new turn can start');
  },
  'batcher/one flush per frame': () => {
    const frames = [];
    const out = [];
    const b = new TextBatcher((t) => out.push(t), (f) => frames.push(f));
    b.push('a'); b.push('b'); b.push('c');
    eq(frames.length, 1, 'frames scheduled');
    frames.shift()();
    b.push('d');
    b.flush();
    eq(out, ['abc', 'd'], 'flushed text');
  },
  'markdown/no HTML ever': () => {
    const d = html(renderMarkdown('<img src=x onerror=alert(1)> **<b>bold</b>** <script>x</script>'));
    eq(d.querySelectorAll('img, b, script').length, 0, 'elements from the source');
    eq(d.querySelector('strong').textContent, '<b>bold</b>', 'escaped text in strong');
  },
  // Issue 20 finding 14: 5,000 nested quotes overflowed the stack.
  'markdown/deep quotes': () => {
    const d = html(renderMarkdown('>'.repeat(5000) + ' deep'));
    eq(d.querySelectorAll('blockquote').length, MAX_DEPTH + 1, 'quote levels capped');
    eq(d.textContent.endsWith('deep'), true, 'the text is kept');
    const lines = html(renderMarkdown(Array.from({ length: 5000 }, (_, k) => '>'.repeat(k + 1) + ' x').join('\n')));
    eq(lines.querySelectorAll('blockquote').length <= MAX_DEPTH + 1, true, 'staircase capped');
  },
  'markdown/falls back to text': () => {
    const broken = new Proxy(document, {
      get(target, prop) {
        if (prop === 'createElement') return (tag) => { if (tag === 'h3') throw new RangeError('boom'); return target.createElement(tag); };
        const v = target[prop];
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const d = html(renderSafe('# Title\n**x**', broken));
    eq(d.textContent, '# Title\n**x**', 'plain text');
  },
  'markdown/inline': () => {
    const d = html(renderMarkdown('**bold** and *it* and _it2_ and `co*de*` and snake_case_name'));
    eq(d.querySelector('strong').textContent, 'bold', 'bold');
    eq([...d.querySelectorAll('em')].map((e) => e.textContent), ['it', 'it2'], 'italics');
    eq(d.querySelector('code').textContent, 'co*de*', 'code is literal');
    eq(d.textContent.includes('snake_case_name'), true, 'underscores inside words stay');
  },
  // An inline token's end is looked for INLINE_MAX characters ahead at
  // most: a line of 100,000 '[' or unclosed '**' draws as its text (each
  // one scanned the whole rest of the line before: seconds of a frozen
  // tab), and a token longer than that stays plain.
  'markdown/inline tokens are bounded': () => {
    for (const src of ['['.repeat(100000), '**a '.repeat(25000), '*a '.repeat(30000)]) {
      const got = html(renderMarkdown(src)).textContent, want = src;
      let at = 0;
      while (at < want.length && got[at] === want[at]) at++;
      eq([got.length, at], [want.length, want.length], `${JSON.stringify(src.slice(0, 8))}… kept as text (its length, where it first differs)`);
    }
    const inside = 'x'.repeat(INLINE_MAX - 10);
    eq(html(renderMarkdown(`**${inside}**`)).querySelector('strong')?.textContent, inside, 'a long bold within the bound');
    const past = 'x'.repeat(INLINE_MAX);
    eq(html(renderMarkdown(`**${past}**`)).querySelector('strong'), null, 'a bold past the bound stays plain');
  },
  // GitHub-style tables: a header row, a delimiter row with as many
  // cells (its colons align them), then rows up to a blank line. Cells
  // are inline Markdown, drawn as text like everything else.
  'markdown/tables': () => {
    const d = html(renderMarkdown('Your week:\n| Day | Plan | Miles |\n|:----|:----:|-----:|\n| Mon | **easy** run | 3 |\n| Tue | rest \\| stretch |\n| Wed | long | 8 | extra |\n\nAfter.'));
    eq(d.querySelector('p').textContent, 'Your week:', 'the paragraph before');
    const t = d.querySelector('table');
    eq([...t.querySelectorAll('thead th')].map((c) => [c.textContent, c.dataset.align || '']), [['Day', 'left'], ['Plan', 'center'], ['Miles', 'right']], 'header and alignment');
    eq([...t.querySelectorAll('tbody tr')].map((r) => [...r.children].map((c) => c.textContent)),
      [['Mon', 'easy run', '3'], ['Tue', 'rest | stretch', ''], ['Wed', 'long', '8']], 'rows: short padded, long cut, escaped pipe kept');
    eq(t.querySelector('tbody strong').textContent, 'easy', 'inline Markdown in a cell');
    eq(t.querySelector('tbody td').dataset.align, 'left', 'cells aligned like their column');
    eq(d.querySelectorAll('p')[1].textContent, 'After.', 'the paragraph after');
    eq(html(renderMarkdown('| a | b |\n|---|\n| 1 | 2 |')).querySelector('table'), null, 'a delimiter row of another width is not a table');
    eq(html(renderMarkdown('a | b\n--|--\n1 | 2')).querySelectorAll('td').length, 2, 'outer pipes are optional');
  },
  'markdown/tables draw no HTML': () => {
    const d = html(renderMarkdown('| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |\n|---|---|\n| <script>x</script> | `<b>` |'));
    eq(d.querySelectorAll('img, script, b, a').length, 0, 'elements from the source');
    eq(d.querySelector('th').textContent, '<img src=x onerror=alert(1)>', 'the header cell as text');
    eq(d.querySelector('td').textContent, '<script>x</script>', 'the cell as text');
    const wide = html(renderMarkdown(`|${' a |'.repeat(10000)}\n|${'---|'.repeat(10000)}`));
    eq(wide.querySelectorAll('th').length <= MAX_COLUMNS, true, 'columns bounded');
  },
  'markdown/links http only': () => {
    const d = html(renderMarkdown('[ok](https://example.com/a) [bad](javascript:alert(1)) [data](data:text/html,x) see http://example.org/x.'));
    const links = [...d.querySelectorAll('a')];
    eq(links.map((a) => a.getAttribute('href')), ['https://example.com/a', 'http://example.org/x'], 'hrefs');
    eq(links[0].rel, 'noopener noreferrer nofollow', 'rel');
    eq(d.textContent.includes('bad'), true, 'unsafe link keeps its text');
    eq(safeURL('javascript:alert(1)'), null, 'safeURL');
  },
  'markdown/blocks': () => {
    const d = html(renderMarkdown('# Title\n\nPara one\nline two\n\n- a\n- b\n\n1. x\n2. y\n\n> quote\n\n```js\nlet a = "<b>";\n```\n\n```\nunclosed'));
    eq(d.querySelector('h3').textContent, 'Title', 'heading');
    eq(d.querySelector('p').childNodes.length, 3, 'line break inside a paragraph');
    eq([...d.querySelectorAll('ul li')].map((l) => l.textContent), ['a', 'b'], 'bullets');
    eq([...d.querySelectorAll('ol li')].map((l) => l.textContent), ['x', 'y'], 'numbers');
    eq(d.querySelector('blockquote').textContent, 'quote', 'quote');
    const pres = d.querySelectorAll('pre code');
    eq([pres[0].textContent, pres[0].dataset.lang, pres[1].textContent], ['let a = "<b>";', 'js', 'unclosed'], 'fences');
  },
  // A line that starts a block for the paragraph loop but that no block
  // takes (``` with more than a language after it, a heading holding a
  // U+2028) used to loop forever, adding empty paragraphs until the tab
  // ran out of memory. A document that refuses to make more than 100
  // elements turns that hang into a failure.
  'markdown/every line makes progress': () => {
    let made = 0;
    const bounded = new Proxy(document, {
      get(target, prop) {
        if (prop === 'createElement') {
          return (tag) => {
            if (++made > 100) throw new Error('runaway: more than 100 elements for a few lines');
            return target.createElement(tag);
          };
        }
        const v = target[prop];
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    for (const [src, word] of [['Run ```npm install``` first.', 'install'], ['```npm install```', 'install'], ['````', '`'],
      ['# Title\u2028more', 'more'], ['## a\u2029b\ntext', 'text']]) {
      made = 0;
      eq(html(renderMarkdown(src, bounded)).textContent.includes(word), true, `${JSON.stringify(src)} keeps ${word}`);
    }
    // A fence with an info string after its language is still a fence.
    made = 0;
    const d = html(renderMarkdown('```js title="plan.js"\nlet a = 1;\n```\nafter', bounded));
    eq([d.querySelector('pre code')?.textContent, d.querySelector('pre code')?.dataset.lang, d.querySelector('p')?.textContent],
      ['let a = 1;', 'js', 'after'], 'fence with an info string');
  },
  'interactions/answer schema': () => {
    eq(answers.show_options('6am'), '6am', 'options');
    eq(answers.show_pulse_check([{ domain: 'health', rating: 4 }], 'tired'), { ratings: [{ domain: 'health', rating: 4 }], note: 'tired' }, 'pulse');
    eq(answerLabel('show_pulse_check', '{"ratings":[{"domain":"health","rating":4},{"domain":"work","rating":2}],"note":"tired"}'),
      'Rated health 4/5, work 2/5 — tired', 'pulse label');
    eq(answerLabel('show_pulse_check', '{"rating":4,"note":"tired"}'), 'Rated 4/5 — tired', 'stored old pulse label');
    eq(answerLabel('show_options', '"6am"'), '6am', 'JSON string label');
    eq(answerLabel('show_options', [{ type: 'text', text: '7am' }]), '7am', 'block label');
  },
  'notes/pinned first': () => {
    const got = sortNotes([
      { id: 'a', is_pinned: false, importance: 90, updated_at: '2025-01-02' },
      { id: 'b', is_pinned: true, importance: 10, updated_at: '2025-01-01' },
      { id: 'c', is_pinned: false, importance: 90, updated_at: '2025-01-03' },
    ]).map((n) => n.id);
    eq(got, ['b', 'c', 'a'], 'order');
  },
  'banner/every error type': () => {
    const retry = (e) => Boolean(describeError(e).retry);
    eq(retry({ type: 'rate_limit' }), true, 'upstream busy offers Retry');
    eq(retry({ type: 'budget_exhausted' }), false, 'budget offers no Retry');
    eq(describeError({ type: 'rate_limit_exceeded', retry_after: 12 }).countdown, 12, 'retry time from the event');
    eq(describeError({ code: 'rate_limit_exceeded', retryAfter: 7 }).countdown, 7, 'retry time from HTTP');
    // An internal error's text stays hidden, but the request id the
    // server gives for reporting it is shown.
    const internal = describeError({ code: 'internal', message: 'internal error; quote request id req_7f3a when reporting it' });
    eq(internal.text.includes('req_7f3a'), true, `internal error text ${JSON.stringify(internal.text)} names the request id`);
    eq(describeError({ type: 'internal', message: 'pq: relation "x" does not exist' }).text.includes('relation'), false, 'other internal text hidden');
    for (const t of ['turn_in_progress', 'api_error', 'invalid_request', 'timeout', 'internal']) {
      if (!describeError({ type: t }).title) throw new Error(`no title for ${t}`);
    }
  },
  'api/one key per request, kept for its same JSON': () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const msg = { message: 'ok' }, again = { message: 'ok' };
    const first = chatKey(msg, '{"message":"ok"}');
    eq(uuid.test(first), true, `key ${first} is a UUID`);
    eq(chatKey(msg, '{"message":"ok"}'), first, 'Retry of the same JSON keeps its key');
    eq(chatKey(again, '{"message":"ok"}') === first, false, 'the same words sent again get a new key');
    // The server refuses a key sent again with another body (409).
    const joined = chatKey(msg, '{"message":"ok","session_id":"sess_1"}');
    eq(joined === first, false, 'a changed body gets a new key');
    eq(chatKey(msg, '{"message":"ok","session_id":"sess_1"}'), joined, 'kept for that body then');
    // Answered, its turn was seen: sent again, it asks for a new one.
    chatAnswered(msg);
    eq(chatKey(msg, '{"message":"ok","session_id":"sess_1"}') === joined, false, 'a new key once answered');
  },
  'api/a key without crypto.randomUUID': () => {
    // Served over plain HTTP on a LAN address, the page has no randomUUID.
    const plain = { getRandomValues: (b) => crypto.getRandomValues(b) };
    const a = newKey(plain), b = newKey(plain);
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    eq([uuid.test(a), uuid.test(b), a === b], [true, true, false], `keys ${a} ${b}`);
  },
};

const { renderInteraction } = await import(at('/assets/interactions.js'));

tests['interactions/options submit once'] = async () => {
  const calls = [];
  let release;
  const box = renderInteraction({ tool_use_id: 't1', name: 'show_options', input: { options: ['A', 'B'] } },
    { onAnswer: (id, content) => { calls.push([id, content]); return new Promise((r) => { release = r; }); } });
  document.body.append(box);
  const [a, b] = box.querySelectorAll('.pill');
  a.click(); b.click(); a.click();
  eq(calls, [['t1', 'A']], 'answers while the first is in flight');
  eq([a.disabled, b.disabled, a.classList.contains('chosen')], [true, true, true], 'controls');
  release(true);
  await new Promise((r) => setTimeout(r, 0));
  b.click();
  eq(calls.length, 1, 'answers after it was accepted');
  box.remove();
};

tests['interactions/refused answer can be retried'] = async () => {
  const calls = [];
  const box = renderInteraction({ tool_use_id: 't2', name: 'show_options', input: { options: ['A', 'B'] } },
    { onAnswer: async (id, content) => { calls.push(content); return calls.length > 1; } });
  const [a, b] = box.querySelectorAll('.pill');
  a.click();
  await new Promise((r) => setTimeout(r, 0));
  eq([a.disabled, a.classList.contains('chosen')], [false, false], 'controls back after a refusal');
  b.click();
  await new Promise((r) => setTimeout(r, 0));
  eq(calls, ['A', 'B'], 'answers');
  eq(b.disabled, true, 'answered');
};

tests['interactions/pulse check per domain'] = async () => {
  const calls = [];
  const box = renderInteraction({ tool_use_id: 't4', name: 'show_pulse_check', input: { context: 'Your week', domains: ['health', 'work'] } },
    { onAnswer: async (id, content) => { calls.push(content); return true; } });
  document.body.append(box);
  const send = box.querySelector('button[type=submit]');
  const scales = box.querySelectorAll('.rating');
  eq(scales.length, 2, 'one scale per domain');
  scales[0].querySelectorAll('.rate')[1].click();
  eq(send.disabled, true, 'every domain needs a rating');
  scales[1].querySelectorAll('.rate')[4].click();
  eq(send.disabled, false, 'all rated');
  send.click();
  await new Promise((r) => setTimeout(r, 0));
  eq(calls, [{ ratings: [{ domain: 'health', rating: 2 }, { domain: 'work', rating: 5 }] }], 'ratings in the server schema');
  box.remove();
};

tests['interactions/pulse check'] = async () => {
  const calls = [];
  const box = renderInteraction({ tool_use_id: 't3', name: 'show_pulse_check', input: { context: 'How did this week feel?' } },
    { onAnswer: async (id, content, label) => { calls.push([content, label]); return true; } });
  document.body.append(box);
  eq(box.querySelector('.interaction-prompt').textContent, 'How did this week feel?', 'prompt');
  const send = box.querySelector('button[type=submit]');
  eq(send.disabled, true, 'send needs a rating');
  box.querySelectorAll('.rate')[3].click();
  box.querySelector('.pulse-note').value = 'tired legs';
  send.click(); send.click();
  await new Promise((r) => setTimeout(r, 0));
  eq(calls, [[{ ratings: [{ domain: 'overall', rating: 4 }], note: 'tired legs' }, 'Rated 4/5 — tired legs']], 'one answer');
  eq([...box.querySelectorAll('.rate')].every((r) => r.disabled), true, 'rating locked');
  box.remove();
};

const { Transcript } = await import(at('/assets/messages.js'));

// The stored tool_use of an interactive call keeps the model's input as
// it was, even when the server refused it (options not a list): history
// must still open, with that call drawn without its broken options.
tests['history/interactive call with input the server refused'] = () => {
  const el = document.createElement('div');
  const scroller = document.createElement('div');
  scroller.append(el);
  const t = new Transcript(el, scroller);
  const messages = [
    { role: 'user', content: 'When should I train?' },
    { role: 'assistant', content_blocks: [{ type: 'tool_use', id: 'toolu_bad', name: 'show_options', input: { options: { a: 'Morning', b: 'Evening' } } }] },
    { role: 'user', content_blocks: [{ type: 'tool_result', tool_use_id: 'toolu_bad', is_error: true, content: 'options: must be an array' }] },
    { role: 'assistant', content_blocks: [{ type: 'tool_use', id: 'toolu_num', name: 'show_pulse_check', input: { domains: 7 } }] },
    { role: 'user', content_blocks: [{ type: 'tool_result', tool_use_id: 'toolu_num', is_error: true, content: 'domains: must be an array' }] },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'Mornings, then.' }] },
  ];
  t.renderHistory(messages, null, {});
  eq(el.textContent.includes('Mornings, then.'), true, 'the reply after the refused call is shown');
};

// A compacted session stores the model's summary of its oldest turns as
// a user message (metadata kind "summary"): history does not show it as
// something the user said.
tests['history/compaction summary is not the user\'s'] = () => {
  const el = document.createElement('div');
  const scroller = document.createElement('div');
  scroller.append(el);
  const t = new Transcript(el, scroller);
  t.renderHistory([
    { role: 'user', content: 'How do I start running?' },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'Start with walks.' }] },
    { role: 'user', content_blocks: [{ type: 'text', text: '<conversation_summary>They asked how to start.</conversation_summary>' }], metadata: { kind: 'summary', through_seq: 2 } },
    { role: 'user', content: 'And after a week?' },
  ], null, {});
  eq(el.textContent.includes('conversation_summary'), false, 'the summary is not drawn');
  eq(el.textContent.includes('And after a week?'), true, 'the messages after it are');
};

// A voice call whose connection drops (the driver's phone loses signal)
// ends: the microphone is released, the button is idle again and the
// driver is told, not left "live" on a dead call with the mic open.
tests['voice/a dropped call ends and frees the microphone'] = async () => {
  const { VoiceButton } = await import(at('/assets/voice.js'));
  const saved = { pc: window.RTCPeerConnection, gum: navigator.mediaDevices && navigator.mediaDevices.getUserMedia, fetch: window.fetch };
  let pc = null;
  const stopped = [];
  class FakePC extends EventTarget {
    constructor() { super(); pc = this; this.connectionState = 'new'; }
    addTrack() {}
    createDataChannel() { return new EventTarget(); }
    async createOffer() { return { type: 'offer', sdp: 'v=0' }; }
    async setLocalDescription() {}
    async setRemoteDescription() { this.connectionState = 'connected'; }
    close() { this.connectionState = 'closed'; }
  }
  window.RTCPeerConnection = FakePC;
  if (!navigator.mediaDevices) Object.defineProperty(navigator, 'mediaDevices', { value: {}, configurable: true });
  navigator.mediaDevices.getUserMedia = async () => ({ getTracks: () => [{ stop: () => stopped.push('mic') }] });
  window.fetch = async () => new Response('v=0', { status: 201 });
  try {
    const errors = [];
    const api = { request: async () => ({ session_id: 'sess_1', connect_url: 'https://voice.invalid/v1/realtime/calls', client_secret: { value: 'ek_1' } }) };
    const b = new VoiceButton(document.createElement('button'), { sessionId: () => 'sess_1', adopt() {}, stored() {}, error: (e) => errors.push(String(e.message || e)) });
    b.api = api;
    await b.start();
    eq(b.button.dataset.state, 'live', 'the call is live');
    pc.connectionState = 'failed';
    const ev = new Event('connectionstatechange');
    pc.dispatchEvent(ev);
    if (pc.onconnectionstatechange) pc.onconnectionstatechange(ev);
    eq(b.button.dataset.state, 'idle', 'the button after the drop');
    eq(stopped, ['mic'], 'microphone tracks stopped');
    eq(errors.length, 1, 'the driver is told once');
  } finally {
    window.RTCPeerConnection = saved.pc;
    if (saved.gum) navigator.mediaDevices.getUserMedia = saved.gum;
    window.fetch = saved.fetch;
  }
};

// A transcript longer than the server takes (32,000 characters, counted
// as code points) is cut to fit, and never inside a character: an emoji
// cut in half is a lone surrogate, which the server refuses as invalid
// UTF-8, and the driver's whole line would be lost.
tests['voice/a long line is cut between characters'] = async () => {
  const { VoiceButton } = await import(at('/assets/voice.js'));
  const sent = [];
  const errors = [];
  const api = { request: async (method, path, body) => { sent.push(body); return {}; } };
  const b = new VoiceButton(document.createElement('button'), { sessionId: () => 'sess_1', adopt() {}, stored() {}, error: (e) => errors.push(String(e.message || e)) });
  b.api = api;
  const text = 'a'.repeat(31999) + '\u{1F697}' + 'b'.repeat(10);
  await b.onEvent({ sessionId: 'sess_1' }, JSON.stringify({ type: 'conversation.item.input_audio_transcription.completed', transcript: text }));
  eq(errors, [], 'no error');
  eq(sent.length, 1, 'one post');
  const content = sent[0].content;
  eq(content.isWellFormed(), true, 'the line is well-formed UTF-16');
  eq([...content].length, 32000, 'code points kept');
  eq(content.endsWith('\u{1F697}'), true, 'the last character whole');
};

// A transcript of only invisible characters (a zero-width space, a
// BOM, a stray combining mark: what a transcription of a cough may hold)
// is no line: the server refuses it as empty, so it is not posted, and
// the driver sees no error for it. Words around such characters are.
tests['voice/an invisible line is not posted'] = async () => {
  const { VoiceButton } = await import(at('/assets/voice.js'));
  const sent = [];
  const errors = [];
  const api = { request: async (method, path, body) => { sent.push(body); return {}; } };
  const b = new VoiceButton(document.createElement('button'), { sessionId: () => 'sess_1', adopt() {}, stored() {}, error: (e) => errors.push(String(e.message || e)) });
  b.api = api;
  for (const text of ['\u200b', '\ufeff\u2060', ' \u200b\u200d ', '\u0301\u0308', '\u3164', '\u200e\u00ad', 'caf\u0065\u0301 \u200b']) {
    await b.onEvent({ sessionId: 'sess_1' }, JSON.stringify({ type: 'conversation.item.input_audio_transcription.completed', transcript: text }));
  }
  eq(errors, [], 'no error');
  eq(sent.map((l) => l.content), ['caf\u0065\u0301 \u200b'], 'only the line with words posted');
};

// The provider transcribes the driver's speech apart from the coach's
// reply ("transcription runs asynchronously with Response creation"), so
// the driver's line may come after the reply to it. The lines are stored
// in the order they were spoken, which the provider gives as it adds the
// conversation's items (input_audio_buffer.committed,
// conversation.item.added with previous_item_id), not as their
// transcripts came: else the session, and the next turn's history, read
// the answer before the question. A transcription that failed holds up
// nothing after it.
tests['voice/lines are stored in the order they were spoken'] = async () => {
  const { VoiceButton } = await import(at('/assets/voice.js'));
  const sent = [];
  const errors = [];
  const api = { request: async (method, path, body) => { sent.push(`${body.role}: ${body.content}`); return {}; } };
  const b = new VoiceButton(document.createElement('button'), { sessionId: () => 'sess_1', adopt() {}, stored() {}, error: (e) => errors.push(String(e.message || e)) });
  b.api = api;
  const call = { sessionId: 'sess_1' };
  const hear = (ev) => b.onEvent(call, JSON.stringify(ev));
  await hear({ type: 'input_audio_buffer.committed', item_id: 'item_u1', previous_item_id: null });
  await hear({ type: 'conversation.item.added', previous_item_id: 'item_u1', item: { id: 'item_u1', type: 'message', role: 'user', content: [{ type: 'input_audio' }] } });
  await hear({ type: 'conversation.item.added', previous_item_id: 'item_u1', item: { id: 'item_a1', type: 'message', role: 'assistant', content: [] } });
  await hear({ type: 'response.output_audio_transcript.done', item_id: 'item_a1', content_index: 0, transcript: 'The airport, after five.' });
  await hear({ type: 'response.done', response: { output: [{ id: 'item_a1' }] } });
  eq(sent, [], 'the reply waits for the question it answers');
  await hear({ type: 'conversation.item.input_audio_transcription.completed', item_id: 'item_u1', content_index: 0, transcript: 'Where should I drive tonight?' });
  // The next question is not transcribed at all; its reply is stored.
  await hear({ type: 'input_audio_buffer.committed', item_id: 'item_u2', previous_item_id: 'item_a1' });
  await hear({ type: 'conversation.item.added', previous_item_id: 'item_u2', item: { id: 'item_a2', type: 'message', role: 'assistant', content: [] } });
  await hear({ type: 'response.output_audio_transcript.done', item_id: 'item_a2', content_index: 0, transcript: 'Downtown, after the game.' });
  await hear({ type: 'conversation.item.input_audio_transcription.failed', item_id: 'item_u2', content_index: 0, error: { message: 'unintelligible' } });
  eq(errors, [], 'no error');
  eq(sent, ['user: Where should I drive tonight?', 'assistant: The airport, after five.', 'assistant: Downtown, after the game.'], 'lines stored');
};

// A page of history ends where the server's bounds end it: 100 messages,
// or sooner once its messages hold 32 MiB (a photo or a PDF makes a
// message megabytes), so a boundary may fall between any two messages.
// Drawn a page at a time, the conversation reads as it does drawn whole:
// for every boundary (and every pair of them), the same messages, replies
// and answers, in the same order.
tests['history/pages cut anywhere draw the conversation whole'] = () => {
  const png = { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' };
  const messages = [
    { role: 'user', content: 'Plan my week' },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'Looking at your notes.' }, { type: 'tool_use', id: 't1', name: 'list_notes', input: {} }] },
    { role: 'user', content_blocks: [{ type: 'tool_result', tool_use_id: 't1', content: '[]' }] },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'When do you train?' }, { type: 'tool_use', id: 't2', name: 'show_options', input: { options: ['Morning', 'Evening'] } }] },
    { role: 'user', content_blocks: [{ type: 'tool_result', tool_use_id: 't2', content: 'Morning' }] },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'Mornings it is.' }, { type: 'tool_use', id: 't3', name: 'save_note', input: { content: 'mornings' } }] },
    { role: 'user', content_blocks: [{ type: 'tool_result', tool_use_id: 't3', content: 'saved' }] },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'Saved.' }] },
    { role: 'user', content_blocks: [{ type: 'image', source: png }, { type: 'text', text: 'My plan, photographed' }] },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'Which day?' }, { type: 'tool_use', id: 't4', name: 'show_options', input: { options: ['Mon', 'Tue'] } }] },
    { role: 'user', content_blocks: [{ type: 'tool_result', tool_use_id: 't4', is_error: true, content: 'dismissed: the user sent a message instead' }, { type: 'image', source: png }, { type: 'text', text: 'Another photo' }] },
    { role: 'assistant', content_blocks: [{ type: 'tool_use', id: 't5', name: 'list_notes', input: {} }] },
    { role: 'user', content_blocks: [{ type: 'tool_result', tool_use_id: 't5', content: '[]' }] },
    { role: 'assistant', content_blocks: [{ type: 'text', text: 'Both look fine.' }] },
  ];
  // shape reads what the reader sees: each message drawn, its kind and
  // text, and the state of each tool card and question.
  const shape = (el) => [...el.querySelectorAll('.msg')].map((m) => {
    const kind = m.classList.contains('user') ? `user${m.classList.contains('answer') ? ' answer' : ''}` : 'reply';
    const cards = [...m.querySelectorAll('.tool-card, .interaction')].map((c) => `${c.className}:${c.dataset.state || ''}:${c.querySelectorAll('.pill.chosen').length}:${c.querySelectorAll(':disabled').length}`);
    return `${kind} [${m.querySelectorAll('img').length} img] ${m.textContent} {${cards.join(',')}}`;
  }).join('\n');
  const draw = (pages) => {
    const el = document.createElement('div');
    const scroller = document.createElement('div');
    scroller.append(el);
    const t = new Transcript(el, scroller);
    t.renderHistory(pages[pages.length - 1], null, {});
    for (let i = pages.length - 2; i >= 0; i--) t.prependHistory(pages[i], {});
    return shape(el);
  };
  const whole = draw([messages]);
  const n = messages.length;
  for (let a = 1; a < n; a++) {
    eq(draw([messages.slice(0, a), messages.slice(a)]), whole, `pages cut before message ${a}`);
    for (let b = a + 1; b < n; b++) {
      eq(draw([messages.slice(0, a), messages.slice(a, b), messages.slice(b)]), whole, `pages cut before messages ${a} and ${b}`);
    }
  }
};
