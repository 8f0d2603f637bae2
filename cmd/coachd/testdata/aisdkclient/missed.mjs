// useChat's resume against a session stream whose older events coachd
// pruned: DefaultChatTransport.reconnectToStream, pointed by
// prepareReconnectToStreamRequest at GET /v1/sessions/{id}/stream with the
// last event id the app saw. The transport hides the response's headers,
// so the notice must be a chunk it reads: prints the chunks it parsed (and
// validated) up to the first turn's finish, as JSON.
// Usage: node missed.mjs BASE_URL KEY SESSION_ID LAST_EVENT_ID
import { DefaultChatTransport } from 'ai'

const [base, key, session, last] = process.argv.slice(2)
const transport = new DefaultChatTransport({
  api: `${base}/v1/chat/stream?protocol=ai-sdk`,
  headers: { Authorization: `Bearer ${key}` },
  prepareReconnectToStreamRequest: ({ headers }) => ({
    api: `${base}/v1/sessions/${session}/stream?protocol=ai-sdk`,
    headers: { ...headers, 'Last-Event-ID': last },
  }),
})
const abort = new AbortController()
const stream = await transport.reconnectToStream({ chatId: 'chat-resumed', abortSignal: abort.signal })
const chunks = []
const reader = stream.getReader()
for (;;) {
  const { value, done } = await reader.read()
  if (done) break
  chunks.push(value)
  if (value.type === 'finish') break
}
abort.abort()
console.log(JSON.stringify({ chunks }))
