// The AI SDK's streamText through @ai-sdk/openai-compatible with a user
// message carrying a photo and a PDF, as its file parts: the provider
// sends them to POST /v1/chat/completions as an image_url part and a file
// part (file_data), both data: URLs. Prints one JSON object.
// Usage: node files.mjs BASE_URL KEY PNG_BASE64
import { streamText } from 'ai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'

const [base, key, png] = process.argv.slice(2)
const pdf = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n%%EOF\n')
const coachd = createOpenAICompatible({ name: 'coachd', baseURL: `${base}/v1`, apiKey: key })
const out = {}
try {
  const result = streamText({
    model: coachd.chatModel('default'), maxRetries: 0,
    messages: [{ role: 'user', content: [
      { type: 'text', text: 'My shift sheet and the map.' },
      { type: 'file', mediaType: 'image/png', data: Buffer.from(png, 'base64') },
      { type: 'file', mediaType: 'application/pdf', data: pdf, filename: 'shift.pdf' },
    ] }],
  })
  let text = ''
  for await (const t of result.fullStream) {
    if (t.type === 'text-delta') text += t.text
    if (t.type === 'error') throw t.error
  }
  out.text = text
} catch (e) {
  out.error = { status: e.statusCode ?? null, message: e.message, body: e.responseBody ?? null }
}
console.log(JSON.stringify(out))
