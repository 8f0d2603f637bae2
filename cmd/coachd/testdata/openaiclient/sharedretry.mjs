// Two chats that open alike (their first exchange the same words, so one
// fingerprint names both), then the first goes on while the model is
// busy: the official openai package retries the completion by itself,
// resending the conversation whole. Prints the retried reply and the
// session it was in, as JSON.
// Usage: node sharedretry.mjs BASE_URL KEY MODEL
import OpenAI from 'openai'

const [base, key, model] = process.argv.slice(2)

async function turn(client, history) {
  const { data: stream, response } = await client.chat.completions.create({ model, messages: history, stream: true }).withResponse()
  let text = ''
  for await (const c of stream) text += c.choices[0]?.delta?.content ?? ''
  return { text, session: response.headers.get('x-coachd-session-id') }
}

const once = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 })
const u1 = { role: 'user', content: 'Hi' }
const a = await turn(once, [u1])
const b = await turn(once, [u1])
const retrying = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 1 })
const retried = await turn(retrying, [u1, { role: 'assistant', content: a.text }, { role: 'user', content: 'Again?' }])
console.log(JSON.stringify({ a, b, retried }))
