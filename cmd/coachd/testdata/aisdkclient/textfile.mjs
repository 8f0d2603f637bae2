// useChat's sendMessage with a text file attached as the browser names
// it (notes.md is text/markdown), a file part with a data: URL, as
// convertFileListToFileUIParts makes of a FileList. Prints the chat's
// error and the assistant's text, as JSON.
// Usage: node textfile.mjs BASE_URL KEY
import { memChat } from './memchat.mjs'

const [base, key] = process.argv.slice(2)
const notes = Buffer.from('# Shift\n\n- airport at 6\n').toString('base64')
const chat = memChat(base, key)
await chat.sendMessage({ text: 'My notes.', files: [
  { type: 'file', mediaType: 'text/markdown', filename: 'notes.md', url: `data:text/markdown;base64,${notes}` },
] })
const last = chat.lastMessage
console.log(JSON.stringify({
  error: chat.error?.message ?? null,
  text: last.role === 'assistant' ? last.parts.filter((p) => p.type === 'text').map((p) => p.text).join('') : '',
}))
