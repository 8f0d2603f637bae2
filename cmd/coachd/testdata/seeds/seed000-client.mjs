// Seed 000's own client code (RLCoach), as its plan writes it:
//  - stream: the ASP reducer (frontend/src/components/coach/stream/
//    reducer.ts) fed by coachd's ASP stream, each `data:` line one event.
//  - ownloop: the backend bridge (frontend/src/lib/coach/backend.ts), the
//    same request bodies, against coachd's own-loop API. coachd's paths
//    are /v1/... where the seed's backend has /api/v1/coach/...
//
// usage: node seed000-client.mjs stream BASE TOKEN MESSAGE [SESSION_ID]
//        node seed000-client.mjs ownloop BASE TOKEN MESSAGE TOOL_NAME TOOL_INPUT_JSON
//        node seed000-client.mjs route BASE TOKEN MESSAGE [SESSION_ID]
const [mode, BACKEND_URL, token, message, arg5, arg6] = process.argv.slice(2);

// reducer.ts
const initialState = { messages: [], thinking: '', toolStatus: null, error: null };
function reducer(state = initialState, event) {
  if (event.type === 'text') {
    const last = state.messages[state.messages.length - 1];
    const messages = last && last.role === 'assistant'
      ? [...state.messages.slice(0, -1), { role: 'assistant', content: last.content + event.text }]
      : [...state.messages, { role: 'assistant', content: event.text }];
    return { ...state, messages };
  }
  if (event.type === 'thinking') {
    return { ...state, thinking: state.thinking + event.text };
  }
  if (event.type === 'tool') {
    return { ...state, toolStatus: `Running ${event.name}...` };
  }
  if (event.type === 'tool_result') {
    return { ...state, toolStatus: null };
  }
  if (event.type === 'error') {
    return { ...state, error: event.message };
  }
  return state;
}

async function stream() {
  const response = await fetch(`${BACKEND_URL}/v1/chat/stream?protocol=asp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ message, session_id: arg5 || undefined }),
  });
  let state = undefined;
  const events = [];
  let buf = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    buf += decoder.decode(chunk, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      for (const line of frame.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const event = JSON.parse(line.slice(6));
        events.push(event);
        state = reducer(state, event);
      }
    }
  }
  return { status: response.status, state: state ?? initialState, events };
}

// backend.ts, with coachd's paths.
async function getToolSchema(token) {
  const response = await fetch(`${BACKEND_URL}/v1/tools/schema`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  if (!response.ok) throw new Error('Tool schema fetch failed');
  return response.json();
}

async function executeTool(token, toolName, toolInput) {
  const response = await fetch(`${BACKEND_URL}/v1/tools/execute`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify({ tool_name: toolName, tool_input: toolInput }),
  });
  if (!response.ok) throw new Error('Tool execution failed');
  return response.json();
}

async function chatPreflight(token, payload) {
  const response = await fetch(`${BACKEND_URL}/v1/chat/preflight`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify(payload),
  });
  if (!response.ok) throw new Error('Preflight failed');
  return response.json();
}

async function chatRecord(token, payload) {
  const response = await fetch(`${BACKEND_URL}/v1/chat/record`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify(payload),
  });
  if (!response.ok) throw new Error('Record failed: ' + await response.text());
  return response.json();
}

async function chatAbort(token, payload) {
  const response = await fetch(`${BACKEND_URL}/v1/chat/abort`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: JSON.stringify(payload),
  });
  if (!response.ok) throw new Error('Abort failed');
  return response.json();
}

// ownloop is route.ts's sequence with the model's turn scripted: one tool
// round, recorded as the seed records it, then the final answer, then a
// second turn that the client abandons (abort).
async function ownloop() {
  const out = {};
  const preflight = await chatPreflight(token, { message, session_id: undefined, replay_id: 'replay-42' });
  out.preflight = preflight;
  const { tools } = await getToolSchema(token);
  out.tool_names = tools.map((t) => t.name);
  const toolInput = JSON.parse(arg6);
  const result = await executeTool(token, arg5, toolInput);
  out.tool_result = result.result;
  const toolUse = { type: 'tool_use', id: 'toolu_1', name: arg5, input: toolInput };
  const toolResults = [{ type: 'tool_result', tool_use_id: 'toolu_1', content: JSON.stringify(result.result) }];
  out.record_round = await chatRecord(token, {
    session_id: preflight.session_id,
    reservation_id: preflight.reservation_id,
    messages: [
      { role: 'user', content_blocks: [{ type: 'text', text: message }], content_text: message },
      { role: 'assistant', content_blocks: [toolUse], content_text: '' },
      { role: 'user', content_blocks: toolResults, content_text: '' },
    ],
    tokens_used: 300,
    estimated_tokens: preflight.estimated_tokens,
    is_free_preview: false,
  });
  const finalText = 'Your boost use is below Diamond average.';
  out.record_final = await chatRecord(token, {
    session_id: preflight.session_id,
    reservation_id: preflight.reservation_id,
    messages: [{ role: 'assistant', content_blocks: [{ type: 'text', text: finalText }], content_text: finalText }],
    tokens_used: 450,
    estimated_tokens: preflight.estimated_tokens,
    is_free_preview: preflight.is_free_preview,
  });
  const second = await chatPreflight(token, { message: 'and my rotation?', session_id: preflight.session_id });
  out.second_history = second.history;
  out.abort = await chatAbort(token, {
    session_id: second.session_id,
    reservation_id: second.reservation_id,
    partial_messages: [{ role: 'user', content_blocks: [{ type: 'text', text: 'and my rotation?' }], content_text: 'and my rotation?' }],
  });
  return out;
}

// route is route.ts's POST up to its stream (lines 560-566): the
// preflight and its budget check, the seed's own 402. A route that throws
// is answered 500 by Next.js.
async function route() {
  try {
    const preflight = await chatPreflight(token, { message, session_id: arg5 || undefined, replay_id: undefined });
    if (preflight.budget_remaining <= 0) {
      return { status: 402, body: { error: 'Budget exhausted' }, preflight };
    }
    return { status: 200, preflight };
  } catch (err) {
    return { status: 500, thrown: err.message };
  }
}

const modes = { stream, ownloop, route };
try {
  console.log(JSON.stringify(await modes[mode]()));
} catch (err) {
  console.log(JSON.stringify({ thrown: err.message }));
}
