// The AI SDK's AbstractChat (what @ai-sdk/react's Chat extends) with the
// state @ai-sdk/react keeps in React kept in an array, over
// DefaultChatTransport to coachd: useChat's own state machine, for the
// scripts here (chat.mjs, retry.mjs, resume.mjs).
import { AbstractChat, DefaultChatTransport } from 'ai'

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
  // onStatus, when set, hears each status the chat goes through.
  setStatus(s) {
    super.setStatus(s)
    this.onStatus?.(s.status)
  }
}

export const newChatID = () => 'chat-' + Math.random().toString(36).slice(2)

// memChat is a chat of id (a new one by default) with the messages given,
// on POST /v1/chat/stream?protocol=ai-sdk plus query; init holds the
// chat's other options (sendAutomaticallyWhen, ...).
export function memChat(base, key, { id = newChatID(), messages = [], query = '', init = {} } = {}) {
  const c = new Chat({
    ...init,
    id,
    transport: new DefaultChatTransport({
      api: `${base}/v1/chat/stream?protocol=ai-sdk${query}`,
      headers: { Authorization: `Bearer ${key}` },
    }),
  })
  c.messages = messages
  return c
}
