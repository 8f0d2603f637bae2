// The official openai package against coachd: models, a completion, the
// conversation continued as a stream (the whole history resent, as these
// clients do), and errors. Prints one JSON object.
// Usage: node client.mjs BASE_URL KEY MODEL
import OpenAI from 'openai'

const [base, key, model] = process.argv.slice(2)
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 })
const out = {}
const fail = (e) => ({ status: e.status, type: e.type, code: e.code, param: e.param, message: e.message })

out.models = (await client.models.list()).data.map((m) => m.id)
out.retrieved = (await client.models.retrieve(model)).id

const history = [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi coach' }]
const first = await client.chat.completions.create({ model, messages: history }).withResponse()
out.first = {
  text: first.data.choices[0].message.content,
  finish: first.data.choices[0].finish_reason,
  object: first.data.object,
  usage: first.data.usage,
  session: first.response.headers.get('x-coachd-session-id'),
}
history.push({ role: 'assistant', content: out.first.text }, { role: 'user', content: 'And tonight?' })

const stream = await client.chat.completions.create({ model, messages: history, stream: true, stream_options: { include_usage: true } })
let text = ''
let finish = null
let usage = null
let chunks = 0
for await (const c of stream) {
  chunks++
  if (c.choices[0]?.delta?.content) text += c.choices[0].delta.content
  if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason
  if (c.usage) usage = c.usage
}
out.second = { text, finish, usage, chunks }

try {
  await client.chat.completions.create({ model: 'no-such-coach', messages: [{ role: 'user', content: 'x' }] })
} catch (e) { out.badModel = fail(e) }
try {
  await client.chat.completions.create({ messages: [{ role: 'user', content: 'x' }] })
} catch (e) { out.noModel = fail(e) }
// LibreChat, Open WebUI (native function calling) and Continue send their
// own tools with every message, tool_choice "auto": the coach answers with
// its own, in the same conversation; a client that requires a call of its
// tools is told it cannot have one.
history.push({ role: 'assistant', content: out.second.text }, { role: 'user', content: 'Thanks' })
const tools = [{ type: 'function', function: { name: 'web_search', description: 'Search the web', parameters: { type: 'object', properties: { q: { type: 'string' } } } } }]
try {
  const c = await client.chat.completions.create({ model, messages: history, tools, tool_choice: 'auto', parallel_tool_calls: true })
  out.tools = { text: c.choices[0].message.content, finish: c.choices[0].finish_reason, toolCalls: c.choices[0].message.tool_calls ?? null }
} catch (e) { out.tools = fail(e) }
try {
  await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'required' })
} catch (e) { out.toolRequired = fail(e) }
// A message a client built wrong (its content a number): the user reads
// which field, and its code.
try {
  await client.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }, { role: 'assistant', content: 'y' }, { role: 'user', content: 5 }] })
} catch (e) { out.badType = fail(e) }
try {
  await new OpenAI({ baseURL: `${base}/v1`, apiKey: 'ck_wrong', maxRetries: 0 }).models.list()
} catch (e) { out.badKey = fail(e) }
console.log(JSON.stringify(out))
