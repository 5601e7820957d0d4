#!/usr/bin/env bash
# Regenerate the reference token counts that crates/pare/tests/tokens_vs_reference.rs checks.
#   scripts/gen_token_fixtures.sh                 write crates/pare/tests/fixtures/tokens/reference.json
#   scripts/gen_token_fixtures.sh --fuzz N FILE   write N seeded random strings' counts to FILE
#                                                 (check with PARE_TOKENS_EXTRA=FILE cargo test)
# Reference: gpt-tokenizer v3 `countTokens` (o200k_base, and its cl100k_base encoding), the
# counter scripts/peers.sh uses, installed by peers.sh into $PEERS_DIR.
# Strings holding special-token text (<|endoftext|> ...) make countTokens throw by default;
# those are counted as ordinary text (disallowedSpecial: new Set()) and marked "special".
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
peers="${PEERS_SH:-$root/scripts/peers.sh}"
# The corpus: $CORPUS_DIR, else the checked-in copies (testdata/README.md) gathered in one dir.
if [ -n "${CORPUS_DIR:-}" ]; then
  corpus="$CORPUS_DIR"
else
  corpus="$(mktemp -d)"
  trap 'rm -rf "$corpus"' EXIT
  ln -s "$root"/examples/payloads/{entities_systems,narrative_day,search_memory,semantic_search_full,vendor_graph_full,website_usage}.json "$corpus"/
fi
dir="${PEERS_DIR:-/tmp/pare-peers}"
"$peers" count /dev/null >/dev/null   # installs gpt-tokenizer once
mode=fixture; n=0; out="$root/crates/pare/tests/fixtures/tokens/reference.json"
if [ "${1:-}" = "--fuzz" ]; then mode=fuzz; n="${2:?N}"; out="${3:?FILE}"; fi
mkdir -p "$(dirname "$out")"
NODE_PATH="$dir/node_modules" node - "$mode" "$n" "$out" "$corpus" <<'JS'
const fs = require('fs');
const path = require('path');
const o200k = require('gpt-tokenizer/encoding/o200k_base');
const cl100k = require('gpt-tokenizer/encoding/cl100k_base');
const version = require('gpt-tokenizer/package.json').version;
const [mode, n, out, corpus] = process.argv.slice(2);

// Default countTokens, exactly as peers.sh counts; special-token text as ordinary text.
function count(enc, text) {
  try { return [enc.countTokens(text), false]; }
  catch (e) { return [enc.countTokens(text, { disallowedSpecial: new Set() }), true]; }
}
function entry(text) {
  const [o, so] = count(o200k, text), [c, sc] = count(cl100k, text);
  const e = { text, o200k: o, cl100k: c };
  if (so || sc) e.special = true;
  return e;
}

// Seeded PRNG (mulberry32), so the random strings are the same on every run.
function rng(seed) {
  return () => {
    seed |= 0; seed = (seed + 0x6D2B79F5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
// Pieces random strings are made of: whole strings, so no surrogate pair is ever split.
const POOL = [
  'a', 'b', 'Z', 'the', 'The', 'THE', 'Hello', 'wORLD', 'camelCase', 'snake_case', 'x',
  ' ', ' ', ' ', '  ', '\t', '\n', '\n', '\r\n', '\r', '\u000b', '\u000c',
  "'", "'s", "'S", "'ll", "'LL", "'ve", "'re", "'d", "'m", "'t", "'x", "n't",
  '0', '7', '42', '1234', '3.14', '-1e-9', '٣', '४', '²', '½', 'Ⅻ',
  '"', '{', '}', '[', ']', ':', ',', '.', '/', '\\', '-', '_', '=', '+', '*', '&', '#', '@',
  '!', '?', '<', '>', '|', '`', '~', '$', '%', '^', '(', ')', ';', '//', '/*', '...', '->',
  '你好', '世界', '日本語', 'カタカナ', 'ひらがな', '한국어', '中', '𠀀', '𪜀',
  '🙂', '👩‍👩‍👧', '🇫🇷', '✨', '👍🏽', '1️⃣', '❤️',
  'e\u0301', '\u0301', '\u0308', 'ñ', 'ß', 'İ', 'ſ', 'K', 'ǅ', 'ﬁ', 'Ω', 'ω', 'ʰ', 'ー',
  'مرحبا', 'שלום', '\u200f', '\u200e', 'हिन्दी', 'ไทย', 'Ελληνικά', 'Русский',
  '\u00a0', '\u2028', '\u2029', '\u3000', '\ufeff', '\u0085', '\u200b', '\u202f', '\u1680',
  '\u2003', '\u205f', '\u180e', '\u0000', '\u0001', '\u007f', '\u009f', '\ufffd', '\ue000',
  'Ａ', '１', '∑', '∫', '→', '€', '£', '°', '©', '<|', '|>', 'endoftext',
  'https://', 'example.com', '.json', 'null', 'true', 'false', '\\n', '\\u00e9',
];
function randomString(r) {
  const parts = 1 + Math.floor(r() * (r() < 0.2 ? 120 : 30));
  let s = '';
  for (let i = 0; i < parts; i++) {
    const p = POOL[Math.floor(r() * POOL.length)];
    const reps = r() < 0.1 ? 1 + Math.floor(r() * 12) : 1;
    s += p.repeat(reps);
  }
  return s;
}

if (mode === 'fuzz') {
  const r = rng(0xC0FFEE ^ Number(n));
  const strings = [];
  for (let i = 0; i < Number(n); i++) strings.push(entry(randomString(r)));
  fs.writeFileSync(out, JSON.stringify({ reference: `gpt-tokenizer ${version}`, strings }) + '\n');
  console.log(`wrote ${strings.length} strings to ${out}`);
  process.exit(0);
}

const jsonPretty = JSON.stringify({
  id: 'ent_01HZX3', name: 'Billing System', score: 0.87234, count: 12345678901234,
  tags: ['prod', 'eu-west-1'], owner: null, active: true,
  meta: { created_at: '2024-05-01T12:34:56.789Z', notes: 'Line 1\nLine 2\t"quoted"' },
}, null, 2);
const S = [
  // ASCII prose, case mixes
  'hello world', 'Hello World', 'HELLO WORLD', 'hElLo WoRlD', 'The quick brown fox jumps over the lazy dog.',
  'HTTPServerError XMLHttpRequest getElementById iPhone McDonald', 'camelCaseIdentifier PascalCase snake_case SCREAMING_CASE kebab-case',
  'a', 'A', ' ', 'I', '.', 'ab', 'Ab', 'aB', 'AB',
  // contractions
  "it's he'll we've they're I'd I'm don't", "IT'S HE'LL WE'VE THEY'RE I'D I'M DON'T", "It'S hE'Ll We'Ve",
  "'s 'll 've 're 'd 'm 't", "'S 'LL 'VE 'RE 'D 'M 'T", "rock'n'roll o'clock y'all ma'am", "''s '''ll", "the dog's bone's owner's",
  "5's 3'll A's", "ſ's 's'ſ", "don\u2019t it\u2019s",
  // JSON
  jsonPretty, JSON.stringify(JSON.parse(jsonPretty)),
  '{"a":1,"b":[1,2,3],"c":{"d":null}}', '[]', '{}', '[{"k":"v"},{"k":"w"}]', '{"emoji":"\\ud83d\\ude00","e":"\\u00e9"}',
  '{\n    "deep": {\n        "deeper": {\n            "deepest": [\n                1,\n                2\n            ]\n        }\n    }\n}',
  '"key": "value", "other_key": "other value",', '{"url":"https://example.com/a/b?c=d&e=f#g","path":"C:\\\\Users\\\\me"}',
  // code
  'fn main() {\n    let x: Vec<u32> = (0..10).map(|i| i * 2).collect();\n    println!("{x:?}");\n}\n',
  'def f(x):\n\tif x > 0:\n\t\treturn x ** 2\n\treturn None\n',
  'const f = async (a, b) => { await g(a ?? b); return a?.c || {}; };',
  '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); return 0; }',
  'SELECT id, name FROM users WHERE created_at > NOW() - INTERVAL \'7 days\' ORDER BY id DESC;',
  '<div class="a b" data-x=\'1\'>&amp; &lt;tag&gt;</div>', '$ ls -la | grep -v "^d" && echo $?',
  // whitespace runs
  'a b', 'a  b', 'a   b', 'a    b', 'a\tb', 'a\t\tb', 'a \t b', 'a\n b', 'a \nb', 'a \n b', 'a  \n  b',
  '   ', '    leading', 'trailing    ', '  both  ', '\n', '\n\n', '\n\n\n', '\r\n', '\r\n\r\n', '\n\r', ' \n \n ',
  '\t', '\t\t\t', 'x\n\n\n\ny', 'x \n\n \n y', 'x\r\n  y', '  \n', '\n  ', 'a\u000bb\u000cc',
  ...[1, 2, 3, 5, 8, 13, 17, 31, 33, 64, 80, 128, 200].map(k => ' '.repeat(k) + 'x'),
  ...[1, 2, 3, 7, 16, 33, 100].map(k => 'x' + '\n'.repeat(k) + 'y'),
  ...[2, 9, 40].map(k => 'x' + ' \n'.repeat(k)),
  // numbers
  '0', '1', '12', '123', '1234', '12345', '1234567', '12345678901234567890', '3.14159265358979323846',
  '-0.000001', '1e-10', '6.02214076e23', '1,234,567.89', '0x7fffffff', '2024-05-01T12:34:56.789Z', '192.168.0.1:8080',
  '٣٤٥ ۱۲۳ १२३ １２３', '½ ² ³ Ⅻ ①', '99999999999999999999999999999999999999999999999999',
  // CJK, Japanese, Korean
  '你好，世界！', '这是一个测试。我们在测试中文分词。', '日本語のテキストとカタカナ、ひらがな。', '한국어 텍스트입니다.', '𠀀𠀁𪜀 漢字',
  '中文English混合Text123', '「引用」『二重』（括弧）',
  // emoji
  '🙂', '🙂🙂🙂', '👩‍👩‍👧‍👦 family', '🇫🇷🇩🇪🇯🇵', '👍🏽👍🏿', '1️⃣2️⃣#️⃣', '❤️‍🔥', 'I ❤️ NY ✨🚀🎉',
  // RTL and other scripts
  'مرحبا بالعالم', 'שלום עולם', 'العربية 123 English', '\u200fRTL mark\u200e', 'हिन्दी भाषा', 'ภาษาไทย', 'Ελληνικά Русский язык',
  'Ǆemal ǅungla ǆ', 'İstanbul ıi', 'Straße STRASSE', 'ﬁnance ﬂow', 'Kelvin K', 'e\u0301te\u0301 café', 'a\u0308\u0301\u0323',
  // unusual whitespace and controls
  'a\u00a0b', 'a \u00a0 b', 'a\u2028b', 'a\u2029b', 'a\u3000b', 'a\ufeffb', 'a \ufeffb', 'a\u0085b', 'a \u0085 b',
  'a\u200bb', 'a\u202fb', 'a\u1680b', 'a\u2003\u2003b', 'a\u205fb', 'a\u180eb', '\ufeff{"bom":1}',
  'a\u0000b', '\u0001\u0002\u0003', 'del\u007f', '\u009f', '\ufffd', '\ue000 private',
  // U+FEFF: gpt-tokenizer decodes byte pairs with TextDecoder, which drops a leading BOM
  '\ufeff', '\ufeff\ufeff', '\ufeff\ufeff\ufeff', '\ufeffusing System;', '\ufeffnamespace', '\ufeff\n', '\ufeff\n\n',
  '\ufeff//', '\ufeff#', '\ufeff/*\n', ' \ufeff', 'x \ufeff y', '\ufeff'.repeat(50), '"\ufeff\ufeffkey": 1',
  // long repeats
  'a'.repeat(1000), 'ab'.repeat(500), ' '.repeat(500), '='.repeat(300), '-'.repeat(257), '\n'.repeat(200),
  '🙂'.repeat(100), '你'.repeat(300), '0'.repeat(100), 'A'.repeat(77) + 'a'.repeat(77), '{"a":' .repeat(50) + '1' + '}'.repeat(50),
  // ids, hashes, urls
  '550e8400-e29b-41d4-a716-446655440000', 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  'SGVsbG8gV29ybGQhIFRoaXMgaXMgYmFzZTY0Lg==', 'https://api.example.com/v1/users/123?fields=id,name&limit=50',
  '/usr/local/lib/node_modules/@scope/pkg/dist/index.js', 'C:\\Program Files\\App\\bin\\app.exe',
  // special-token text is ordinary text
  '<|endoftext|>', 'before <|endoftext|> after', '<|im_start|>user\nhi<|im_end|>', '<|endofprompt|><|fim_prefix|>', '<|notatoken|>',
];
const r = rng(20240501);
for (let i = 0; i < 300; i++) S.push(randomString(r));

const strings = S.map(entry);
const files = fs.existsSync(corpus)
  ? fs.readdirSync(corpus).filter(f => f.endsWith('.json')).sort().map(f => {
      const text = fs.readFileSync(path.join(corpus, f), 'utf8');
      return { file: f, bytes: Buffer.byteLength(text), o200k: o200k.countTokens(text), cl100k: cl100k.countTokens(text) };
    })
  : [];
const fixture = {
  generator: 'scripts/gen_token_fixtures.sh',
  reference: `gpt-tokenizer ${version} countTokens`,
  strings, corpus: files,
};
fs.writeFileSync(out, JSON.stringify(fixture, null, 1) + '\n');
console.log(`wrote ${strings.length} strings, ${files.length} corpus files to ${out}`);
JS
