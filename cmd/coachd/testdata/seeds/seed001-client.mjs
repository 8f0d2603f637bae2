// Seed 001's own client calls (rideshare coach): the validation endpoint
// with the document's curl bodies, CoachChat's notes panel (load, the
// optimistic deleteNote with rollback, pin, stats) and the chat stream
// reading the coach's reply with the action tags the server runs.
// coachd's paths are /v1/... where the seed's are /api/coach/... and
// /api/chat.
//
// usage: node seed001-client.mjs BASE TOKEN [MESSAGE]
// With a message, only the chat runs and its events are printed.
const [base, token, only] = process.argv.slice(2);
const auth = { Authorization: `Bearer ${token}` };
const json = { ...auth, 'Content-Type': 'application/json' };
const out = {};

async function chat(message) {
  const res = await fetch(`${base}/v1/chat/stream`, { method: 'POST', headers: json, body: JSON.stringify({ message }) });
  let text = '';
  const events = [];
  let buf = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let i;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const ev = (frame.match(/^event: (.*)$/m) || [])[1];
      const data = (frame.match(/^data: (.*)$/m) || [])[1];
      if (!ev || !data) continue;
      const d = JSON.parse(data);
      events.push({ event: ev, data: d });
      if (ev === 'content_delta') text += d.text;
    }
  }
  return { status: res.status, text, events };
}
if (only) {
  console.log(JSON.stringify(await chat(only)));
  process.exit(0);
}

// "Validation Endpoint"
const validate = (body) => fetch(`${base}/v1/actions/validate`, { method: 'POST', headers: json, body: JSON.stringify(body) }).then((r) => r.json());
out.validate_ok = await validate({ action_type: 'SAVE_NOTE', payload: { note_type: 'preference', title: 'Test', content: 'Test content' } });
out.validate_bad = await validate({ action_type: 'SAVE_NOTE', payload: { note_type: 'preference', content: 'Test content' } });
out.validate_zone = await validate({ action_type: 'ZONE_INTEL', payload: { zone_type: 'honey_hole', zone_name: 'Deep Ellum', market_slug: 'Dallas TX', reason: 'bars' } });

// The chat: the reply carries action tags; the driver sees none of them.
const c = await chat('Deep Ellum is great on Fridays, remember I like mornings');
out.chat_text = c.text;
out.chat_results = c.events.filter((e) => e.event === 'function_result').map((e) => e.data);

// Notes panel.
let notes = (await fetch(`${base}/v1/notes`, { headers: auth }).then((r) => r.json())).notes;
out.notes_loaded = notes.map((n) => n.title);
const deleteNote = async (noteId) => {
  const original = notes;
  notes = notes.filter((n) => n.id !== noteId); // Optimistic
  try {
    const r = await fetch(`${base}/v1/notes/${noteId}`, { method: 'DELETE', headers: auth });
    if (!r.ok) throw new Error('Delete failed');
  } catch (err) {
    notes = original; // Rollback on error
  }
};
await deleteNote('note_doesnotexist000000000000000');
out.after_failed_delete = notes.length;
const pin = await fetch(`${base}/v1/notes/${notes[0].id}/pin`, { method: 'POST', headers: auth });
out.pin_status = pin.status;
await deleteNote(notes[0].id);
out.after_delete = notes.length;
out.stats = await fetch(`${base}/v1/notes/stats`, { headers: auth }).then((r) => r.json());
console.log(JSON.stringify(out));
