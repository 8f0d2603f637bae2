// A chat UI's Regenerate and edit through the official openai package:
// the conversation resent up to the reply regenerated, or with an earlier
// message edited, streamed as Open WebUI and LibreChat do. Prints the
// replies and the sessions they were in, as JSON.
// Usage: node branch.mjs BASE_URL KEY MODEL
import OpenAI from 'openai'

const [base, key, model] = process.argv.slice(2)
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 })

async function turn(history) {
  const { data: stream, response } = await client.chat.completions.create({ model, messages: history, stream: true }).withResponse()
  let text = ''
  for await (const c of stream) text += c.choices[0]?.delta?.content ?? ''
  return { text, session: response.headers.get('x-coachd-session-id') }
}

const u1 = { role: 'user', content: 'Plan my night' }
const first = await turn([u1])
const a1 = { role: 'assistant', content: first.text }
const second = await turn([u1, a1, { role: 'user', content: 'And after?' }])
// Regenerate the second reply: the history up to its question again.
const regenerated = await turn([u1, a1, { role: 'user', content: 'And after?' }])
// Edit the second question instead.
const edited = await turn([u1, a1, { role: 'user', content: 'What about lunch?' }])
console.log(JSON.stringify({ first, second, regenerated, edited }))
