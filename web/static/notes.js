// The notes panel: what the coach remembers about the user. Every change
// shows at once (optimistic) and is undone, visibly, when the server says
// no: the note flashes back to how it was and a toast says why.

import { h, icon, relTime, toast } from './ui.js';

export const NOTE_TYPES = [
  ['preference', 'Preference'], ['insight', 'Insight'], ['tip', 'Tip'],
  ['feedback', 'Feedback'], ['pattern', 'Pattern'], ['market_update', 'Market update'],
];
const TYPE_LABEL = Object.fromEntries(NOTE_TYPES);

// sortNotes puts pinned notes first, then the most important, then the
// most recently changed.
export function sortNotes(notes) {
  return [...notes].sort((a, b) =>
    (b.is_pinned - a.is_pinned) ||
    ((b.importance || 0) - (a.importance || 0)) ||
    String(b.updated_at || '').localeCompare(String(a.updated_at || '')));
}

let tmpSeq = 0;

export class NotesPanel {
  constructor(root, api, { onCount = () => {}, onAuthError = () => {} } = {}) {
    this.root = root;
    this.api = api;
    this.onCount = onCount;
    this.onAuthError = onAuthError;
    this.api = null;
    this.notes = [];
    this.loaded = false;
    this.editing = null; // id of the note being edited
    this.editorEl = null; // its form, kept across renders
    this.list = root.querySelector('.note-list');
    this.deleted = root.querySelector('.deleted-list');
    this.deletedBox = root.querySelector('.deleted');
    this.deletedCount = root.querySelector('.deleted-count');
    this.empty = root.querySelector('.notes-empty');
    this.form = root.querySelector('.note-form');
    this.addBtn = root.querySelector('.add-note');
    this.addBtn.addEventListener('click', () => this.openForm());
    this.form.addEventListener('submit', (e) => { e.preventDefault(); this.create(); });
    this.form.querySelector('[data-act=cancel]').addEventListener('click', () => this.closeForm());
    const sel = this.form.elements.note_type;
    for (const [v, label] of NOTE_TYPES) sel.append(h('option', { value: v }, label));
  }

  async load() {
    const api = this.api;
    if (!api) return;
    try {
      const res = await api.notes();
      if (this.api !== api) return; // signed out (or in again) meanwhile
      this.notes = res.notes || [];
      this.loaded = true;
      this.render();
    } catch (err) {
      if (err.status === 401) this.onAuthError(err);
      else toast(`Couldn't load notes: ${err.message}`, 'error');
    }
  }

  // reset forgets the notes (signing out); load fetches them again.
  reset() {
    this.api = null;
    this.notes = [];
    this.loaded = false;
    this.editing = null;
    this.closeForm();
    this.render();
  }

  find(id) { return this.notes.find((n) => n.id === id); }

  // mutate applies change to one note now and runs call; if call fails,
  // only that note goes back to how it was (other changes in flight keep
  // theirs) and it flashes. done(result) reconciles with the server's copy.
  async mutate(id, change, call, what, done) {
    const before = this.find(id);
    const prev = before ? { ...before } : null;
    change();
    this.render();
    try {
      const result = await call();
      if (done) done(result);
      else if (result && result.id) this.replace(id, result);
      this.render();
      return true;
    } catch (err) {
      if (prev) this.replace(id, prev);
      else this.notes = this.notes.filter((n) => n.id !== id);
      this.render();
      this.flash(id);
      toast(`Couldn't ${what}: ${err.message}. Undone.`, 'error');
      if (err.status === 401) this.onAuthError(err);
      return false;
    }
  }

  replace(id, note) {
    const i = this.notes.findIndex((n) => n.id === id);
    if (i >= 0) this.notes[i] = note;
    else this.notes.push(note);
  }

  flash(id) {
    const el = this.root.querySelector(`[data-id="${CSS.escape(id)}"]`);
    if (!el) return;
    el.classList.remove('rolled-back');
    void el.offsetWidth; // restart the animation
    el.classList.add('rolled-back');
  }

  openForm(values = {}) {
    this.form.hidden = false;
    this.addBtn.hidden = true;
    this.form.elements.note_type.value = values.note_type || 'preference';
    this.form.elements.title.value = values.title || '';
    this.form.elements.content.value = values.content || '';
    this.form.elements.title.focus();
  }

  closeForm() {
    this.form.hidden = true;
    this.addBtn.hidden = false;
    this.form.reset();
  }

  async create() {
    const f = this.form.elements;
    const values = { note_type: f.note_type.value, title: f.title.value.trim(), content: f.content.value.trim() };
    if (!values.title || !values.content) {
      (values.title ? f.content : f.title).focus();
      return;
    }
    this.closeForm();
    const now = new Date().toISOString();
    const tmp = { ...values, id: `tmp_${++tmpSeq}`, importance: 50, is_pinned: false, created_at: now, updated_at: now, pending: true };
    const ok = await this.mutate(tmp.id, () => this.notes.push(tmp), () => this.api.createNote(values), 'save the note',
      (note) => this.replace(tmp.id, note));
    // Nothing typed is lost: a failed create reopens the form as it was.
    if (!ok && this.form.hidden) this.openForm(values);
  }

  save(note, fields) {
    this.editing = null;
    return this.mutate(note.id, () => this.replace(note.id, { ...note, ...fields, pending: true }),
      () => this.api.updateNote(note.id, fields), 'save your changes');
  }

  togglePin(note) {
    return this.mutate(note.id, () => this.replace(note.id, { ...note, is_pinned: !note.is_pinned, pending: true }),
      () => this.api.pinNote(note.id), note.is_pinned ? 'unpin the note' : 'pin the note');
  }

  remove(note) {
    const deleted = { ...note, deleted_at: new Date().toISOString(), pending: true };
    return this.mutate(note.id, () => this.replace(note.id, deleted), () => this.api.deleteNote(note.id), 'delete the note',
      () => this.replace(note.id, { ...deleted, pending: false }));
  }

  restore(note) {
    return this.mutate(note.id, () => this.replace(note.id, { ...note, deleted_at: null, pending: true }),
      () => this.api.restoreNote(note.id), 'restore the note');
  }

  render() {
    const live = sortNotes(this.notes.filter((n) => !n.deleted_at));
    const gone = this.notes.filter((n) => n.deleted_at)
      .sort((a, b) => String(b.deleted_at).localeCompare(String(a.deleted_at)));
    // The form of the note being edited is kept, not drawn again: a
    // render for another change (a pin, notes reloaded after a turn)
    // must not throw away what the user is typing, nor the cursor.
    if (!this.editing || (this.editorEl && this.editorEl.dataset.id !== this.editing)) this.editorEl = null;
    const active = document.activeElement;
    const typing = this.editorEl && this.editorEl.contains(active)
      ? { el: active, start: active.selectionStart, end: active.selectionEnd } : null;
    this.list.replaceChildren(...live.map((n) => (this.editing === n.id ? this.editorFor(n) : this.card(n))));
    if (typing && typing.el.isConnected && document.activeElement !== typing.el) {
      typing.el.focus();
      if (typing.start !== null) typing.el.setSelectionRange(typing.start, typing.end);
    }
    this.deleted.replaceChildren(...gone.map((n) => this.deletedCard(n)));
    this.deletedBox.hidden = gone.length === 0;
    this.deletedCount.textContent = String(gone.length);
    this.empty.hidden = !this.loaded || live.length > 0;
    this.onCount(live.length);
  }

  card(n) {
    const act = (name, label, fn, extra = {}) => h('button', {
      type: 'button', class: `icon-btn note-${name}`, title: label, 'aria-label': label,
      disabled: n.pending || n.id.startsWith('tmp_'), onclick: fn, ...extra,
    }, icon(name));
    return h('li', { class: `note${n.is_pinned ? ' pinned' : ''}${n.pending ? ' pending' : ''}`, dataset: { id: n.id } },
      h('div', { class: 'note-top' },
        h('span', { class: `chip chip-${n.note_type}` }, TYPE_LABEL[n.note_type] || n.note_type),
        n.is_pinned ? h('span', { class: 'pinned-mark' }, icon('pin'), 'Pinned') : null,
        h('div', { class: 'note-actions' },
          act('pin', n.is_pinned ? 'Unpin' : 'Pin', () => this.togglePin(n), { 'aria-pressed': String(Boolean(n.is_pinned)) }),
          act('edit', 'Edit', () => { this.editing = n.id; this.render(); }),
          act('trash', 'Delete', () => this.remove(n)))),
      h('h3', { class: 'note-title' }, n.title),
      h('p', { class: 'note-content' }, n.content),
      h('div', { class: 'note-meta' }, n.pending ? 'Saving…' : relTime(n.updated_at)));
  }

  editorFor(n) {
    if (!this.editorEl) this.editorEl = this.editor(n);
    return this.editorEl;
  }

  editor(n) {
    const title = h('input', { class: 'input', name: 'title', value: n.title, maxlength: 200, required: true, 'aria-label': 'Title' });
    const content = h('textarea', { class: 'input', name: 'content', rows: 4, maxlength: 5000, required: true, 'aria-label': 'Content' });
    content.value = n.content;
    const form = h('form', { class: 'note note-editor', dataset: { id: n.id } }, title, content,
      h('div', { class: 'form-actions' },
        h('button', { type: 'button', class: 'btn ghost', onclick: () => { this.editing = null; this.render(); } }, 'Cancel'),
        h('button', { type: 'submit', class: 'btn primary' }, 'Save')));
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      const fields = { title: title.value.trim(), content: content.value.trim() };
      // The form outlives renders: save over the note as it is now.
      if (fields.title && fields.content) this.save(this.find(n.id) || n, fields);
    });
    form.addEventListener('keydown', (e) => {
      if (e.key === 'Escape') { e.stopPropagation(); this.editing = null; this.render(); }
    });
    queueMicrotask(() => title.focus());
    return form;
  }

  deletedCard(n) {
    return h('li', { class: `note deleted-note${n.pending ? ' pending' : ''}`, dataset: { id: n.id } },
      h('span', { class: 'note-title' }, n.title),
      h('button', { type: 'button', class: 'btn ghost small note-restore', disabled: n.pending, onclick: () => this.restore(n) },
        icon('undo'), 'Restore'));
  }
}
