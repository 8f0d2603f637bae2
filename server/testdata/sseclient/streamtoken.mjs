// An EventSource client of a session stream opened with its stream token
// (POST /v1/sessions/{id}/stream-token's stream_url): a browser's
// EventSource sends no header of its own, so the token in the URL is all
// it has. Its error listener is seed 004's: showError(JSON.parse(e.data)
// .message). Prints {shown, readyState} when showError ran, {open} when
// the stream opened. Usage: node streamtoken.mjs URL
import { EventSource } from 'eventsource'

const [url] = process.argv.slice(2)
const eventSource = new EventSource(url)
const timer = setTimeout(() => { console.error('timeout'); process.exit(2) }, 20000)
function showError(message) {
  console.log(JSON.stringify({ shown: message }))
  clearTimeout(timer)
  eventSource.close()
}

eventSource.onopen = () => console.log(JSON.stringify({ open: true }))
eventSource.addEventListener('error', (e) => {
  const data = JSON.parse(e.data);
  showError(data.message);
});
