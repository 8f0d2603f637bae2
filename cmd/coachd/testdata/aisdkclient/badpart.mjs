// useChat's own state (AbstractChat) with a chat an app restored wrong
// (a text part's text a number), then sendMessage(), which resends it:
// prints the chat's error, what useChat shows the user, as JSON.
// Usage: node badpart.mjs BASE_URL KEY
import { memChat } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const chat = memChat(base, key, { messages: [{ id: 'u0', role: 'user', parts: [{ type: 'text', text: 5 }] }] })
await chat.sendMessage({ text: 'Where should I go?' })
console.log(JSON.stringify({ error: chat.error?.message ?? null }))
