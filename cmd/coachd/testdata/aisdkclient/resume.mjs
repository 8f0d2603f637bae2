// useChat's resume (resume: true calls resumeStream on mount) against
// coachd with the AI SDK's AbstractChat and DefaultChatTransport's default
// reconnect URL ({api}/{chatId}/stream): a page reloaded while a turn runs
// (the first tab stopped reading; on_disconnect=continue keeps the turn),
// after it ended, and for a chat coachd never saw. Prints, for each, the
// chat's error, status and messages, as JSON.
// Usage: node resume.mjs BASE_URL KEY
import { memChat, newChatID as newID } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const chat = (id, messages = []) => memChat(base, key, { id, messages, query: '&on_disconnect=continue' })
const show = (c) => ({
  error: c.error?.message ?? null,
  status: c.status,
  messages: c.messages.map((m) => ({ id: m.id, role: m.role, text: m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') })),
})
const out = {}

// Ended: the reply came in full, then the page is reloaded.
const ended = chat(newID())
await ended.sendMessage({ text: 'Hi' })
const reloaded = chat(ended.id, structuredClone(ended.messages))
await reloaded.resumeStream()
out.ended = show(reloaded)

// Unknown: a chat coachd never saw.
const fresh = chat(newID())
await fresh.resumeStream()
out.unknown = show(fresh)

// Running: the first tab goes away once the reply streams.
const first = chat(newID())
const streaming = new Promise((resolve) => { first.onStatus = (s) => s === 'streaming' && resolve() })
const sent = first.sendMessage({ text: 'Tell me a long story' })
await streaming
await first.stop()
await sent
const again = chat(first.id, structuredClone(first.messages.filter((m) => m.role === 'user')))
await again.resumeStream()
out.running = show(again)
console.log(JSON.stringify(out))
