// The official openai package against a coachd whose model is busy: a
// streamed completion that fails before its first chunk must fail as an
// HTTP error the SDK raises with its status (and retries when allowed),
// not as a 200 stream with an error in it. Prints one JSON object.
// Usage: node busy.mjs BASE_URL KEY MODEL
import OpenAI from 'openai'

const [base, key, model] = process.argv.slice(2)
const out = {}
const fail = (e) => ({ status: e.status ?? null, type: e.type, code: e.code, message: e.message })
const ask = async (client, content, before = []) => {
  const stream = await client.chat.completions.create({ model, messages: [...before, { role: 'user', content }], stream: true })
  let text = ''
  for await (const c of stream) text += c.choices[0]?.delta?.content ?? ''
  return { text }
}

try {
  out.busy = await ask(new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 }), 'Busy?')
} catch (e) { out.busy = fail(e) }
// The SDK's own retry resends the conversation whole, its new message
// included: coachd must not store that message twice.
try {
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 1 })
  const hello = await ask(client, 'Hi')
  out.retried = await ask(client, 'Again?', [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: hello.text }])
} catch (e) { out.retried = fail(e) }
console.log(JSON.stringify(out))
