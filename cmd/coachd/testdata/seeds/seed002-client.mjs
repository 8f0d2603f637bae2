// Seed 002's own client handling (Sage): streamAndFinalize's SSE parsing
// from chat-view.tsx, with the handlers the plan adds (toolCall,
// roundBoundary, showPulseCheck, showOptions) and the ones it keeps (text,
// error, sessionCompleted, modeChange, arcCompleted, [DONE]). React state
// becomes plain variables; it prints the state the chat ends with.
//
// coachd keeps the history server-side: the client sends the new message
// (or the interactive tool's result) and the session id, not the whole
// conversation.
//
// usage: node seed002-client.mjs BASE TOKEN BODY_JSON
const [base, token, body] = process.argv.slice(2);

let message = '';
let streamPhase = 'idle';
let activeToolCount = 0;
let toolCalls = 0;
let pendingToolResult = null;
let suggestionPills = null;
let showCheckinPulse = false;
let sessionCompleted = false;
let mode = null;
let arcCompleted = null;
let error = null;
let done = false;
const appendToMessage = (t) => { message += t; };

const response = await fetch(`${base}/v1/chat/stream?protocol=sage`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
  body,
});
const reader = response.body.getReader();
const decoder = new TextDecoder();
let buffer = '';
streamPhase = 'streaming';
for (;;) {
  const { done: eof, value } = await reader.read();
  if (eof) break;
  buffer += decoder.decode(value, { stream: true });
  const lines = buffer.split('\n');
  buffer = lines.pop();
  for (const line of lines) {
    if (!line.startsWith('data: ')) continue;
    const data = line.slice(6);
    if (data === '[DONE]') { done = true; continue; }
    const parsed = JSON.parse(data);
    if (parsed.text) appendToMessage(parsed.text);
    if (parsed.error) error = parsed.error;
    if (parsed.sessionCompleted) sessionCompleted = true;
    if (parsed.modeChange) mode = parsed.modeChange;
    if (parsed.arcCompleted) arcCompleted = parsed.arcCompleted;
    if (parsed.toolCall) {
      activeToolCount++;
      toolCalls++;
      streamPhase = 'toolExecuting';
    }
    if (parsed.roundBoundary) {
      appendToMessage('\n\n');
      activeToolCount = 0;
      streamPhase = 'streaming';
    }
    if (parsed.showPulseCheck) {
      streamPhase = 'idle';
      pendingToolResult = { toolUseId: parsed.showPulseCheck.toolUseId, type: 'pulse_check' };
      showCheckinPulse = true;
    }
    if (parsed.showOptions) {
      streamPhase = 'idle';
      pendingToolResult = { toolUseId: parsed.showOptions.toolUseId, type: 'options' };
      suggestionPills = parsed.showOptions.options;
    }
  }
}
console.log(JSON.stringify({
  status: response.status, session_id: response.headers.get('X-Coachd-Session-Id'), message, toolCalls,
  pendingToolResult, suggestionPills, showCheckinPulse, sessionCompleted, mode, arcCompleted, error, done,
}));
