// useChat's edit of an earlier message (sendMessage with its messageId)
// and Regenerate of a reply the chat has (regenerate()) against coachd,
// with the AI SDK's AbstractChat. Prints each step's error and the chat's
// messages at the end, as JSON.
// Usage: node edit.mjs BASE_URL KEY
import { memChat } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const chat = memChat(base, key)
const errors = []
const step = async (f) => { await f(); errors.push(chat.error?.message ?? null) }
await step(() => chat.sendMessage({ text: 'Plan my night' }))
await step(() => chat.sendMessage({ text: 'And after?' }))
const second = chat.messages[2].id
await step(() => chat.sendMessage({ text: 'What about lunch?', messageId: second }))
await step(() => chat.regenerate())
console.log(JSON.stringify({
  errors,
  messages: chat.messages.map((m) => ({ role: m.role, text: m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') })),
}))
