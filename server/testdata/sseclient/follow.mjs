// Follows a session with the eventsource package's EventSource: a GET to
// URL (its ?token= authenticates), named events, automatic reconnection
// with Last-Event-ID. Prints one JSON line per event {event, data, id}, and
// {open: n} each time the connection opens. Ends after message_end.
// Usage: node follow.mjs URL
import { EventSource } from 'eventsource'

const [url] = process.argv.slice(2)
const names = ['message_start', 'content_delta', 'function_call', 'function_result', 'round_boundary',
  'interaction', 'session_changed', 'usage', 'message_end', 'error']
const es = new EventSource(url)
let opens = 0
const done = (code) => { es.close(); process.exit(code) }
const timer = setTimeout(() => { console.error('timeout'); done(2) }, 30000)
es.onopen = () => console.log(JSON.stringify({ open: ++opens }))
for (const name of names) {
  es.addEventListener(name, (e) => {
    if (name === 'error' && e.data === undefined) {
      // The connection dropped: EventSource reconnects by itself.
      console.log(JSON.stringify({ dropped: true }))
      return
    }
    console.log(JSON.stringify({ event: name, data: e.data, id: e.lastEventId }))
    if (name === 'message_end') {
      clearTimeout(timer)
      done(0)
    }
  })
}
