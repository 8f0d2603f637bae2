// useChat's own state machine (the AI SDK's AbstractChat, what
// @ai-sdk/react's Chat extends) against coachd: a turn pauses on a tool
// waiting for the user (show_options), addToolOutput answers it and
// sendMessage() resends the chat, as an app does. Prints the chat's
// messages (ids, roles, part types) and its error, as JSON.
// Usage: node chat.mjs BASE_URL KEY
import { AbstractChat, DefaultChatTransport } from 'ai'

const [base, key] = process.argv.slice(2)

// The state @ai-sdk/react keeps in React, kept in an array.
class State {
  status = 'ready'
  error = undefined
  messages = []
  pushMessage = (m) => { this.messages = this.messages.concat(m) }
  popMessage = () => { this.messages = this.messages.slice(0, -1) }
  replaceMessage = (i, m) => { this.messages = [...this.messages.slice(0, i), m, ...this.messages.slice(i + 1)] }
  snapshot = (x) => structuredClone(x)
}

class Chat extends AbstractChat {
  constructor(init) { super({ ...init, state: new State() }) }
}

const chat = new Chat({
  id: 'chat-' + Math.random().toString(36).slice(2),
  transport: new DefaultChatTransport({
    api: `${base}/v1/chat/stream?protocol=ai-sdk`,
    headers: { Authorization: `Bearer ${key}` },
  }),
})
await chat.sendMessage({ text: 'Where should I go?' })
const tool = chat.lastMessage.parts.find((p) => p.type === 'tool-show_options')
await chat.addToolOutput({ tool: 'show_options', toolCallId: tool.toolCallId, output: 'Downtown' })
await chat.sendMessage()
console.log(JSON.stringify({
  error: chat.error?.message ?? null,
  messages: chat.messages.map((m) => ({ id: m.id, role: m.role, parts: m.parts.map((p) => p.type) })),
}))
