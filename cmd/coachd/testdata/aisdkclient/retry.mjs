// useChat's Retry button (the AI SDK docs' error handling: on error,
// regenerate()) against coachd, with the AI SDK's AbstractChat: the model
// was busy before it said anything, the chat shows the error, and
// regenerate() sends the chat again with trigger regenerate-message.
// Then regenerate() of the answer it has. Prints the chat's errors and
// its messages after the first regenerate(), as JSON.
// Usage: node retry.mjs BASE_URL KEY
import { memChat } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const chat = memChat(base, key)
await chat.sendMessage({ text: 'Plan my night' })
const first = chat.error?.message ?? null
await chat.regenerate()
const error = chat.error?.message ?? null
const messages = structuredClone(chat.messages)
// Regenerating an answer the chat has: a new reply to the same question.
await chat.regenerate()
console.log(JSON.stringify({
  first,
  error,
  again: chat.error?.message ?? null,
  messages: messages.map((m) => ({ role: m.role, text: m.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') })),
}))
