// The Vercel AI SDK against coachd. streamText through the
// openai-compatible provider (POST /v1/chat/completions), then what useChat
// runs: DefaultChatTransport posting to /v1/chat/stream?protocol=ai-sdk and
// readUIMessageStream assembling the reply: a turn with a tool call, a
// paused turn (show_options) and its answer through the tool's output
// (addToolResult). Prints one JSON object.
// Usage: node client.mjs BASE_URL KEY
import { DefaultChatTransport, readUIMessageStream, streamText } from 'ai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'

const [base, key] = process.argv.slice(2)
const out = {}

const coachd = createOpenAICompatible({ name: 'coachd', baseURL: `${base}/v1`, apiKey: key, includeUsage: true })
const result = streamText({ model: coachd.chatModel('default'), prompt: 'Hi from the AI SDK', maxRetries: 0 })
let streamed = ''
for await (const t of result.textStream) streamed += t
out.streamText = { text: streamed, finishReason: await result.finishReason }

const transport = new DefaultChatTransport({
  api: `${base}/v1/chat/stream?protocol=ai-sdk`,
  headers: { Authorization: `Bearer ${key}` },
})
const chatId = 'chat-' + Math.random().toString(36).slice(2)
const messages = []
const send = async (trigger = 'submit-message') => {
  const stream = await transport.sendMessages({ chatId, messages, trigger, messageId: undefined, abortSignal: undefined })
  let last
  for await (const m of readUIMessageStream({ stream })) last = m
  return last
}
const user = (text) => ({ id: 'u' + messages.length, role: 'user', parts: [{ type: 'text', text }] })

messages.push(user('Check my notes, then plan my night'))
const first = await send()
messages.push(first)
out.first = first.parts.map((p) => ({ type: p.type, state: p.state, text: p.text, output: p.output }))

messages.push(user('Where should I go?'))
const paused = await send()
messages.push(paused)
out.paused = paused.parts.map((p) => ({ type: p.type, state: p.state, text: p.text, input: p.input, toolCallId: p.toolCallId }))

// addToolResult: the paused tool's part gets its output, and the chat sends.
const tool = paused.parts.find((p) => p.type === 'tool-show_options')
tool.state = 'output-available'
tool.output = 'Downtown'
const resumed = await send()
out.resumed = resumed.parts.map((p) => ({ type: p.type, text: p.text }))
console.log(JSON.stringify(out))
