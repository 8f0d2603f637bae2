// useChat's approval flow against coachd: a turn pauses on a call that
// needs approval (tool-approval-request), addToolApprovalResponse marks the
// tool part approval-responded, and the chat sends it: once approving,
// once denying. Prints one JSON object.
// Usage: node approval.mjs BASE_URL KEY
import { DefaultChatTransport, readUIMessageStream, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai'

const [base, key] = process.argv.slice(2)
const transport = new DefaultChatTransport({
  api: `${base}/v1/chat/stream?protocol=ai-sdk`,
  headers: { Authorization: `Bearer ${key}` },
})
const parts = (m) => m.parts.map((p) => ({ type: p.type, state: p.state, text: p.text, toolCallId: p.toolCallId, approval: p.approval, input: p.input }))

async function flow(approved, reason) {
  const chatId = 'chat-' + Math.random().toString(36).slice(2)
  const messages = [{ id: 'u0', role: 'user', parts: [{ type: 'text', text: 'Remember my morning runs' }] }]
  // message: as useChat does, a reply to an assistant message continues it.
  const send = async (message) => {
    const stream = await transport.sendMessages({ chatId, messages, trigger: 'submit-message', messageId: undefined, abortSignal: undefined })
    let last
    const onError = (e) => { throw e }
    for await (const m of readUIMessageStream({ stream, message, onError, terminateOnError: true })) last = m
    return last
  }
  const paused = await send()
  messages.push(paused)
  const out = { paused: parts(paused) }
  // What addToolApprovalResponse does to the part.
  const tool = paused.parts.find((p) => p.state === 'approval-requested')
  tool.state = 'approval-responded'
  tool.approval = { ...tool.approval, approved, reason }
  out.sends = lastAssistantMessageIsCompleteWithApprovalResponses({ messages })
  out.resumed = parts(await send(structuredClone(paused)))
  return out
}

console.log(JSON.stringify({ approve: await flow(true, undefined), deny: await flow(false, 'not now') }))
