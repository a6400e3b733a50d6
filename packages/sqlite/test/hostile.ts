/** Labels and content that break naive SQL, encodings or size assumptions. Shared by Node and workerd tests. */
export const HOSTILE_LABELS = [
  "it's",
  'say "hi"',
  "'; DROP TABLE cf_agents_context_blocks; --",
  "memory OR 1=1",
  "中文标签",
  "emoji 🧠🔥",
  "label%_with_like_wildcards",
  "x".repeat(500),
];

export const HOSTILE_CONTENT = [
  "",
  'it\'s "quoted" and `ticked`',
  "'); DELETE FROM cf_agents_context_blocks; --",
  "nul\u0000inside",
  "unicode ✓ 中文 русский עברית 🙂 \u{1F9D1}\u200D\u{1F4BB} e\u0301",
  "═".repeat(46),
  `${"line\n".repeat(1000)}end`,
  "y".repeat(1024 * 1024),
];

/** Ids of sessions a search must keep apart: long, quoted, spaced, emoji, control characters, the default. */
export const HOSTILE_SESSION_IDS = [
  "",
  "x".repeat(10_000),
  // 40,000 bytes of UTF-8: its token is cut at FTS5's 32 KB, as is the next one's, which differs only after it.
  "🦊".repeat(10_000),
  `${"🦊".repeat(9_999)}🐻`,
  `it's "quoted" 'twice'`,
  "with  spaces\tand\ttabs ",
  "control\u0001\u0002\u001f\u007fcharacters",
];
