// Attachments: the composer's attach button and drop zone, uploads through
// POST /v1/uploads, and how stored image and document blocks are shown.
// The server checks everything again (it sniffs the bytes); the checks here
// only spare the user an upload that would be refused.

import { h } from './ui.js';

// The server's limits (coachd.MaxAttachments, coachd.MaxAttachmentBytes,
// coachd.MaxAttachmentBytesPerMessage, coachd.MaxTextAttachmentBytes).
export const MAX_FILES = 5;
export const MAX_BYTES = 3 * 1024 * 1024;
export const MAX_TOTAL = 10 * 1024 * 1024;
export const MAX_TEXT = 100 * 1024;
export const TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'application/pdf', 'text/plain'];

// mayUpload reports whether the server may take a file of this declared
// type: it sniffs the bytes and takes any UTF-8 text as a text document,
// so text types other than text/plain (text/markdown, text/csv,
// application/json, …), no type at all (an unknown extension) and
// application/vnd.ms-excel (what Windows browsers type a .csv as) go to
// it to decide. Only types it never takes are refused here.
export function mayUpload(type) {
  return TYPES.includes(type) || type === '' || type.startsWith('text/') || type === 'application/vnd.ms-excel' ||
    /^application\/([\w.+-]+\+)?(json|xml|yaml|x-yaml|x-sh|javascript|x-ndjson|sql)$/.test(type);
}

function kb(n) { return `${Math.max(1, Math.round(n / 1024))} KB`; }

// Attachments holds the files picked for the next message.
export class Attachments {
  constructor({ button, input, tray, error, dropZone, text, getApi, onChange }) {
    this.items = []; // {file, id, el, state: 'uploading' | 'ready' | 'failed'}
    this.text = text; // the composer's field, focused once the tray empties
    this.tray = tray;
    this.errorEl = error;
    this.getApi = getApi;
    this.onChange = onChange || (() => {});
    button.addEventListener('click', () => input.click());
    input.addEventListener('change', () => { this.add([...input.files]); input.value = ''; });
    dropZone.addEventListener('dragover', (e) => {
      if (e.dataTransfer && [...e.dataTransfer.types].includes('Files')) {
        e.preventDefault();
        dropZone.classList.add('dragging');
      }
    });
    dropZone.addEventListener('dragleave', () => dropZone.classList.remove('dragging'));
    // Files pasted into the composer (a copied screenshot) are attached;
    // pasted text is left to be typed.
    dropZone.addEventListener('paste', (e) => {
      const files = e.clipboardData ? [...e.clipboardData.files] : [];
      if (files.length === 0) return;
      e.preventDefault();
      this.add(files);
    });
    dropZone.addEventListener('drop', (e) => {
      dropZone.classList.remove('dragging');
      if (!e.dataTransfer || e.dataTransfer.files.length === 0) return;
      e.preventDefault();
      this.add([...e.dataTransfer.files]);
    });
  }

  // add checks and uploads files; refused ones are named in the error line
  // and never leave the browser.
  add(files) {
    const problems = [];
    for (const file of files) {
      if (this.items.length >= MAX_FILES) {
        problems.push(`${file.name}: at most ${MAX_FILES} files per message`);
      } else if (!mayUpload(file.type)) {
        problems.push(`${file.name}: not a supported file (PNG, JPEG, GIF, WebP, PDF or plain text)`);
      } else if (file.size > MAX_BYTES) {
        problems.push(`${file.name} is ${kb(file.size)}: files must be at most 3 MB`);
      } else if (file.size === 0) {
        problems.push(`${file.name} is empty`);
      } else if (this.total() + file.size > MAX_TOTAL) {
        problems.push(`${file.name}: the files of one message must be at most 10 MB in all`);
      } else {
        this.upload(file);
      }
    }
    this.showError(problems.join(' · '));
  }

  showError(text) {
    this.errorEl.textContent = text;
    this.errorEl.hidden = !text;
  }

  async upload(file) {
    const remove = h('button', { type: 'button', class: 'attach-remove', 'aria-label': `Remove ${file.name}`, text: '×' });
    const el = h('li', { class: 'attach-chip uploading', title: file.name },
      h('span', { class: 'attach-name', text: file.name }), h('span', { class: 'attach-size', text: kb(file.size) }), remove);
    const item = { file, id: '', el, state: 'uploading' };
    remove.addEventListener('click', () => {
      // The × goes with its file: the focus on it goes to the next file's
      // (or the one before), or to the composer after the last.
      const had = document.activeElement === remove;
      const at = this.items.indexOf(item);
      this.remove(item);
      this.discard([item]);
      const next = this.items[at] || this.items[at - 1];
      if (had) (next ? next.el.querySelector('.attach-remove') : this.text)?.focus();
    });
    this.items.push(item);
    this.tray.append(el);
    this.tray.hidden = false;
    this.onChange();
    try {
      const api = this.getApi();
      const form = new FormData();
      form.append('file', file, file.name);
      const res = await fetch(`${api.base}/v1/uploads`, { method: 'POST', headers: api.headers(false), body: form });
      const body = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error((body.error && body.error.message) || `upload failed (${res.status})`);
      item.id = body.id;
      item.state = 'ready';
      // Only the server knows a file is text (it reads the bytes).
      item.text = body.media_type === 'text/plain' ? body.bytes : 0;
      if (!this.items.includes(item)) {
        this.discard([item]); // removed while it uploaded
      } else if (item.text && this.textTotal() > MAX_TEXT) {
        // A message's text documents may hold 100 KiB in all: the file
        // that goes over is refused by name, as the 10 MB total is,
        // instead of the whole message at Send.
        this.remove(item);
        this.discard([item]);
        this.showError(`${file.name}: the text files of one message must be at most 100 KB in all`);
      }
      el.classList.remove('uploading');
    } catch (err) {
      item.state = 'failed';
      el.classList.remove('uploading');
      el.classList.add('failed');
      this.showError(`${file.name}: ${err.message}`);
    }
    this.onChange();
  }

  remove(item) {
    this.items = this.items.filter((i) => i !== item);
    item.el.remove();
    this.tray.hidden = this.items.length === 0;
    this.onChange();
  }

  // discard deletes the uploads of items. A stored message holds its own
  // copy of its files, and uploads count against the user's caps (100
  // files, 50 MiB) with no other way to free them: kept, they would stop
  // the user attaching anything after a few weeks.
  discard(items) {
    const api = this.getApi();
    if (!api) return;
    items.filter((i) => i.id).forEach((i) => api.deleteUpload(i.id).catch(() => {}));
  }

  // clearAll empties the tray (signing out).
  clearAll() {
    this.sent([...this.items]);
  }

  // total is the size of the files that would go with the next message.
  total() { return this.items.filter((i) => i.state !== 'failed').reduce((n, i) => n + i.file.size, 0); }

  // textTotal is the bytes of text documents that would go with the next
  // message.
  textTotal() { return this.items.filter((i) => i.state === 'ready').reduce((n, i) => n + (i.text || 0), 0); }

  // busy is true while an upload runs: sending waits for it.
  busy() { return this.items.some((i) => i.state === 'uploading'); }

  // ready is true when there is something to send.
  ready() { return this.items.some((i) => i.state === 'ready') && !this.busy(); }

  // sending are the files that go with the next message.
  sending() { return this.items.filter((i) => i.state === 'ready'); }

  // refs are the chat request's attachments for items.
  static refs(items) { return items.map((i) => ({ upload_id: i.id })); }

  // sent takes the items that went with a message out of the tray, and
  // leaves any attached since for the next one.
  sent(items) {
    items.forEach((i) => this.remove(i));
    this.showError('');
  }

  // previews are elements showing the files being sent, for the user's
  // bubble before the history is reloaded.
  static previews(items) {
    return items.map((i) => (i.file.type.startsWith('image/')
      ? h('img', { class: 'attach-thumb', src: URL.createObjectURL(i.file), alt: i.file.name })
      : docChip(i.file.name, i.file.type)));
  }
}

function docChip(name, type) {
  return h('span', { class: 'attach-doc', title: type }, h('span', { class: 'attach-name', text: name || 'Document' }), h('span', { class: 'attach-size', text: type === 'application/pdf' ? 'PDF' : 'Text' }));
}

// attachmentView shows a stored image or document block: a thumbnail from
// a data: URL (the image's own bytes; the page's CSP allows data: images)
// or a chip with the document's title.
export function attachmentView(b) {
  const src = b.source || {};
  if (b.type === 'image' && src.type === 'base64' && TYPES.includes(src.media_type)) {
    return h('img', { class: 'attach-thumb', src: `data:${src.media_type};base64,${src.data}`, alt: 'Attached image', loading: 'lazy' });
  }
  return docChip(b.title, src.media_type);
}

// userBubble is a user message with its attachments above its text.
export function userBubble(attachments, text) {
  const bubble = h('div', { class: 'bubble' });
  if (attachments.length > 0) bubble.append(h('div', { class: 'attach-list' }, attachments));
  if (text) bubble.append(h('div', { class: 'bubble-text', text }));
  return bubble;
}
