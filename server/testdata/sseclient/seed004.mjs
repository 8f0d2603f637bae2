// Seed 004's EventSource client ("SSE Event Format", Client
// Implementation), as written: an EventSource on the stream endpoint with
// an Authorization header (the eventsource package takes headers through
// its fetch option), and an error listener that parses e.data and shows
// its message. Prints {shown} when showError ran, {session} on
// message_start. showError closes the EventSource: left open (the seed's
// snippet does not say), the end of the stream reaches the same listener
// again, with no data, as EventSource reports every closed connection.
// Usage: node seed004.mjs URL TOKEN
import { EventSource } from 'eventsource'

const [url, token] = process.argv.slice(2)
const eventSource = new EventSource(url, {
  fetch: (input, init) => fetch(input, { ...init, headers: { ...init.headers, 'Authorization': `Bearer ${token}` } }),
})
const timer = setTimeout(() => { console.error('timeout'); process.exit(2) }, 20000)
function showError(message) {
  console.log(JSON.stringify({ shown: message }))
  clearTimeout(timer)
  eventSource.close()
}

eventSource.addEventListener('message_start', (e) => {
  const data = JSON.parse(e.data);
  console.log(JSON.stringify({ session: data.session_id }))
});

eventSource.addEventListener('error', (e) => {
  const data = JSON.parse(e.data);
  showError(data.message);
});
