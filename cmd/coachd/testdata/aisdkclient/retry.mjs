// useChat's Retry button (the AI SDK docs' error handling: on error,
// regenerate()) against coachd, with the AI SDK's AbstractChat: the model
// was busy before it said anything, the chat shows the error, and
// regenerate() sends the chat again with trigger regenerate-message.
// Then regenerate() of the answer it has. Prints the chat's errors and
// its messages after the first regenerate(), as JSON.
// Usage: node retry.mjs BASE_URL KEY
import { AbstractChat, DefaultChatTransport } from 'ai'

const [base, key] = process.argv.slice(2)

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
await chat.sendMessage({ text: 'Plan my night' })
const first = chat.error?.message ?? null
await chat.regenerate()
const error = chat.error?.message ?? null
const messages = structuredClone(chat.messages)
// Regenerating an answer the chat has: refused, nothing runs.
await chat.regenerate()
console.log(JSON.stringify({
  first,
  error,
  again: chat.error?.message ?? null,
  messages: messages.map((m) => ({ role: m.role, text: m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') })),
}))
