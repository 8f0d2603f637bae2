// Seed 004's own client: useChatStream's sendMessage from the "SSE Event
// Format" document (React/TypeScript example), as written, with the React
// state replaced by plain variables and handleFunctionResult from
// "Handling Navigation Events". It prints what the user would end with.
//
// usage: node seed004-client.mjs BASE_URL TOKEN MESSAGE [SESSION_ID]
const [base, token, message, session] = process.argv.slice(2);

// parseSSE: one chunk's events (blank-line separated, event:/data: lines).
function parseSSE(chunk) {
  const events = [];
  for (const block of chunk.split('\n\n')) {
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
    }
    if (data.length) events.push({ event, data: data.join('\n') });
  }
  return events;
}

let responseText = '';
let sessionId = session || null;
const seen = [];
const navigations = [];
const functionResults = [];

function handleFunctionResult(data) {
  functionResults.push(data);
  if (data.name === 'navigate_to_page') {
    try {
      const nav = JSON.parse(data.result);
      if (nav.action === 'navigate') {
        navigations.push(`/${nav.page}${nav.workout_id ? `/${nav.workout_id}` : ''}`);
      }
    } catch {
      // Not a navigation result
    }
  }
}

const sendMessage = async (message) => {
  responseText = '';
  const response = await fetch(`${base}/v1/chat/stream`, {
    method: 'POST',
    headers: {
      'Authorization': `Bearer ${token}`,
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ message, session_id: sessionId }),
  });
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    const chunk = decoder.decode(value);
    const events = parseSSE(chunk);
    for (const event of events) {
      seen.push(event.event);
      switch (event.event) {
        case 'message_start':
          sessionId = JSON.parse(event.data).session_id;
          break;
        case 'content_delta':
          responseText += JSON.parse(event.data).text;
          break;
        case 'function_call':
          break;
        case 'function_result':
          handleFunctionResult(JSON.parse(event.data));
          break;
        case 'error':
          throw Object.assign(new Error(JSON.parse(event.data).message), { data: JSON.parse(event.data), status: response.status });
      }
    }
  }
  return response.status;
};

const out = { session_id: null, response: '', events: seen, function_results: functionResults, navigations };
try {
  out.status = await sendMessage(message);
} catch (err) {
  out.error = err.message;
  out.error_data = err.data;
  out.status = err.status;
}
out.session_id = sessionId;
out.response = responseText;
console.log(JSON.stringify(out));
