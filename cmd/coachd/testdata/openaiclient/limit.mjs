// The official openai package against a coachd whose user reached a limit
// that lasts (the month's messages): the 429 must reach the caller at
// once, not after the SDK's own retries, each refused again. Prints one
// JSON object. Usage: node limit.mjs BASE_URL KEY MODEL
import OpenAI from 'openai'

const [base, key, model] = process.argv.slice(2)
let attempts = 0
const client = new OpenAI({
  baseURL: `${base}/v1`, apiKey: key, // the default maxRetries (2)
  fetch: (...args) => { attempts++; return fetch(...args) },
})
const out = {}
out.first = (await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi' }] })).choices[0].message.content
attempts = 0
try {
  await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'Hi again' }] })
} catch (e) {
  out.limited = { status: e.status, type: e.type, retryAfter: e.headers?.get('retry-after'), attempts }
}
console.log(JSON.stringify(out))
