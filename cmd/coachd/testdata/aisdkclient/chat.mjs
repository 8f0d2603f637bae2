// useChat's own state machine (the AI SDK's AbstractChat, what
// @ai-sdk/react's Chat extends) against coachd: a turn pauses on a tool
// waiting for the user (show_options), addToolOutput answers it and
// sendMessage() resends the chat, as an app does. Prints the chat's
// messages (ids, roles, part types) and its error, as JSON.
// Usage: node chat.mjs BASE_URL KEY
import { memChat } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const chat = memChat(base, key)
await chat.sendMessage({ text: 'Where should I go?' })
const tool = chat.lastMessage.parts.find((p) => p.type === 'tool-show_options')
await chat.addToolOutput({ tool: 'show_options', toolCallId: tool.toolCallId, output: 'Downtown' })
await chat.sendMessage()
console.log(JSON.stringify({
  error: chat.error?.message ?? null,
  messages: chat.messages.map((m) => ({ id: m.id, role: m.role, parts: m.parts.map((p) => p.type) })),
}))
