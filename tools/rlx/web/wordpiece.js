// wordpiece.js — BERT's tokenizer (Hugging Face tokenizers' BertNormalizer, BertPreTokenizer,
// WordPiece and the [CLS] … [SEP] template) for the page `rlx export --target webgpu` writes
// for a sentence encoder. Its vocabulary and normalizer settings come from wordpiece.json, which
// RLX writes from the model's own tokenizer; the export's test checks its ids against RLX's.

// the classes of Hugging Face tokenizers (Rust): "other" categories, the White_Space property
const isControl = c => /\p{C}/u.test(c) && c !== '\t' && c !== '\n' && c !== '\r';
const isWhitespace = c => /\p{White_Space}/u.test(c);
// ASCII symbols count as punctuation for BERT even where Unicode says S* ($, +, <, ^, `, |, ~)
const isPunctuation = c => {
  const cp = c.codePointAt(0);
  return (cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126) || /\p{P}/u.test(c);
};
const isCjk = cp =>
  (cp >= 0x4e00 && cp <= 0x9fff) || (cp >= 0x3400 && cp <= 0x4dbf) || (cp >= 0x20000 && cp <= 0x2a6df) || (cp >= 0x2a700 && cp <= 0x2b73f) ||
  (cp >= 0x2b740 && cp <= 0x2b81f) || (cp >= 0x2b820 && cp <= 0x2ceaf) || (cp >= 0xf900 && cp <= 0xfaff) || (cp >= 0x2f800 && cp <= 0x2fa1f);

export class WordPiece {
  // spec: wordpiece.json — {vocab: [token by id], added: [{content, id, normalized, single_word,
  // lstrip, rstrip}], lowercase, strip_accents, handle_chinese_chars, clean_text, unk, cls, sep,
  // pad, prefix, max_input_chars_per_word, max_tokens}
  constructor(spec) {
    this.spec = spec;
    this.ids = new Map(spec.vocab.map((t, i) => [t, i]));
    for (const k of ['unk', 'cls', 'sep', 'pad'])
      if (!this.ids.has(spec[k])) throw new Error(`wordpiece.json: its ${k} token ${spec[k]} is not in the vocabulary`);
  }

  normalize(text) {
    const s = this.spec;
    let out = '';
    for (const c of text) {
      const cp = c.codePointAt(0);
      if (s.clean_text && (cp === 0 || cp === 0xfffd || isControl(c))) continue;
      if (s.clean_text && isWhitespace(c)) out += ' ';
      else if (s.handle_chinese_chars && isCjk(cp)) out += ` ${c} `;
      else out += c;
    }
    if (s.strip_accents) out = out.normalize('NFD').replace(/\p{Mn}/gu, '');
    // per character, as Rust's char::to_lowercase: no context rules (a final Σ stays σ)
    if (s.lowercase) out = Array.from(out, c => c.toLowerCase()).join('');
    return out;
  }

  // Words: split at whitespace (dropped) and around each punctuation character (kept).
  static words(text) {
    const words = [];
    let cur = '';
    for (const c of text) {
      if (isWhitespace(c)) {
        if (cur) words.push(cur);
        cur = '';
      } else if (isPunctuation(c)) {
        if (cur) words.push(cur);
        words.push(c);
        cur = '';
      } else {
        cur += c;
      }
    }
    if (cur) words.push(cur);
    return words;
  }

  // Greedy longest match from the left; a word with a piece not in the vocabulary is [UNK].
  pieces(word) {
    const s = this.spec, chars = Array.from(word);
    if (chars.length > s.max_input_chars_per_word) return [this.ids.get(s.unk)];
    const out = [];
    for (let start = 0; start < chars.length;) {
      let end = chars.length, id;
      for (; end > start; --end) {
        const piece = (start > 0 ? s.prefix : '') + chars.slice(start, end).join('');
        id = this.ids.get(piece);
        if (id !== undefined) break;
      }
      if (end === start) return [this.ids.get(s.unk)];
      out.push(id);
      start = end;
    }
    return out;
  }

  // Added tokens ([MASK], [CLS] …) found in `text` as tokenizers finds them: leftmost, longest
  // first, with single_word, lstrip and rstrip; yields strings still to tokenize and token ids.
  static splitAdded(text, tokens) {
    const out = [];
    const isWord = c => c !== undefined && /[\p{L}\p{M}\p{Nd}\p{Pc}]/u.test(c);
    let from = 0, pending = 0;
    while (from < text.length) {
      const hit = tokens.find(t => text.startsWith(t.content, from) &&
        !(t.single_word && (isWord(text[from - 1]) || isWord(text[from + t.content.length]))));
      if (!hit) { ++from; continue; }
      let before = text.slice(pending, from), next = from + hit.content.length;
      if (hit.lstrip) before = before.replace(/\s+$/u, '');
      if (hit.rstrip) while (next < text.length && /\s/u.test(text[next])) ++next;
      if (before) out.push(before);
      out.push(hit.id);
      from = pending = next;
    }
    if (pending < text.length) out.push(text.slice(pending));
    return out;
  }

  // [CLS] + the text's pieces (the first max_tokens - 2) + [SEP].
  encode(text) {
    const ids = [];
    const added = this.spec.added ?? [];
    const raw = added.filter(t => !t.normalized).sort((a, b) => b.content.length - a.content.length);
    const normalized = added.filter(t => t.normalized).sort((a, b) => b.content.length - a.content.length);
    for (const part of WordPiece.splitAdded(text, raw)) {
      if (typeof part === 'number') { ids.push(part); continue; }
      for (const piece of WordPiece.splitAdded(this.normalize(part), normalized)) {
        if (typeof piece === 'number') ids.push(piece);
        else for (const w of WordPiece.words(piece)) ids.push(...this.pieces(w));
      }
    }
    const keep = Math.max(0, this.spec.max_tokens - 2);
    return [this.ids.get(this.spec.cls), ...ids.slice(0, keep), this.ids.get(this.spec.sep)];
  }

  get padId() { return this.ids.get(this.spec.pad); }
}
