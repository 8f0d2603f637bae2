// useChat's resume (resumeStream, what resume: true does on mount) of a
// turn that goes on from a paused tool's answer: the chat pauses on
// show_options, addToolOutput answers it and sendMessage() sends the
// chat (on_disconnect=continue keeps the turn); the tab goes away once the
// reply streams, and the reloaded page, with the messages the app had
// sent, resumes. Prints the reloaded chat's error, status and messages
// (id, role, part types, text), and the id the answered message had.
// Usage: node resumeanswer.mjs BASE_URL KEY
import { memChat, newChatID } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const chat = (id, messages = []) => memChat(base, key, { id, messages, query: '&on_disconnect=continue' })
const first = chat(newChatID())
await first.sendMessage({ text: 'Where should I go?' })
const tool = first.lastMessage.parts.find((p) => p.type === 'tool-show_options')
await first.addToolOutput({ tool: 'show_options', toolCallId: tool.toolCallId, output: 'Downtown' })
const sentMessages = structuredClone(first.messages)
const streaming = new Promise((resolve) => { first.onStatus = (s) => s === 'streaming' && resolve() })
const sent = first.sendMessage()
await streaming
await first.stop()
await sent
const again = chat(first.id, sentMessages)
await again.resumeStream()
console.log(JSON.stringify({
  answered: sentMessages[sentMessages.length - 1].id,
  error: again.error?.message ?? null,
  status: again.status,
  messages: again.messages.map((m) => ({
    id: m.id,
    role: m.role,
    parts: m.parts.map((p) => p.type),
    text: m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('|'),
  })),
}))
