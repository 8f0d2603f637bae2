// useChat with sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
// the AI SDK docs' way for an app to send its paused tools' answers by
// itself, against coachd: turns that end on a tool round coachd ran (a
// call the reply was cut in, a round cut by max_rounds) must not be sent
// back as if they waited for the client. Prints, for each turn, the
// chat's error, status, message count and the last message's tool parts.
// Usage: node autosend.mjs BASE_URL KEY TURNS
import { lastAssistantMessageIsCompleteWithToolCalls } from 'ai'
import { memChat } from './memchat.mjs'

const [base, key, turns] = process.argv.slice(2)
const chat = memChat(base, key, { init: { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls } })
const out = []
for (let i = 0; i < Number(turns ?? 1); i++) {
  // The automatic request, if any, runs before sendMessage returns.
  await chat.sendMessage({ text: 'Check my notes ' + i })
  out.push({
    error: chat.error?.message ?? null,
    status: chat.status,
    messages: chat.messages.length,
    tools: chat.lastMessage.parts.filter((p) => p.type.startsWith('tool-')).map((p) => ({ type: p.type, state: p.state })),
  })
}
console.log(JSON.stringify(out))
