// useChat's client-side edit: setMessages drops the chat's last exchange
// (what an app's own "edit" button does), then sendMessage sends the new
// text without a messageId. Prints each step's error and the chat's
// messages at the end, as JSON.
// Usage: node setmessages.mjs BASE_URL KEY
import { memChat } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const chat = memChat(base, key)
const errors = []
const step = async (f) => { await f(); errors.push(chat.error?.message ?? null) }
await step(() => chat.sendMessage({ text: 'Plan my night' }))
await step(() => chat.sendMessage({ text: 'And after?' }))
// setMessages(messages.slice(0, 2)): what useChat's setMessages does.
chat.messages = chat.messages.slice(0, 2)
await step(() => chat.sendMessage({ text: 'What about lunch?' }))
await step(() => chat.sendMessage({ text: 'Thanks' }))
console.log(JSON.stringify({
  errors,
  messages: chat.messages.map((m) => ({ role: m.role, text: m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') })),
}))
