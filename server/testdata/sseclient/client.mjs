// Reads one /v1/chat/stream response with the eventsource package (an SSE
// client independent of coachd's) and prints every event as a JSON line
// {"event": name, "data": data}. Usage: node client.mjs URL KEY BODY
import { EventSource } from 'eventsource'

const [url, key, body] = process.argv.slice(2)
const names = ['message_start', 'content_delta', 'thinking_delta', 'function_call', 'function_result',
  'round_boundary', 'interaction', 'session_changed', 'usage', 'message_end', 'error', 'message']

const es = new EventSource(url, {
  fetch: (input, init) => fetch(input, {
    ...init,
    method: 'POST',
    body,
    headers: { ...init.headers, Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
  }),
})

const done = (code) => { es.close(); process.exit(code) }
const timer = setTimeout(() => { console.error('timeout'); done(2) }, 20000)

for (const name of names) {
  es.addEventListener(name, (e) => {
    if (name === 'error' && e.data === undefined) {
      // The connection ended or failed: not an event the server sent.
      console.error('connection error', e.message ?? '')
      clearTimeout(timer)
      done(3)
      return
    }
    console.log(JSON.stringify({ event: name, data: e.data }))
    if (name === 'message_end' || name === 'error' || e.data === '[DONE]') {
      clearTimeout(timer)
      done(0)
    }
  })
}
