/**
 * The texts of the search checks. They are chosen so that a reasonable full-text provider passes: FTS5
 * with `tokenize='porter unicode61'`, bm25 ranking and an OR of the query's words (with or without stop
 * words), and core's `InMemorySearchProvider`. A provider that requires every query word in a match (an
 * implicit AND, as `agents/context` does) fails the question check, on purpose: a model asks questions.
 *
 * Keys start with `kb-` and appear in no entry's text, so an entry can be told apart in a result by its
 * key or by its full text, whatever the result's layout.
 */
export interface SearchEntry {
  key: string;
  content: string;
}

export const GENERAL_ENTRIES = {
  lighthouse: {
    key: "kb-lighthouse",
    content: "The old lighthouse on the north cape was repainted white last spring.",
  },
  planting: {
    key: "kb-planting",
    content: "Volunteers spent Saturday planting seedlings along the riverbank trail.",
  },
  allergy: {
    key: "kb-allergy",
    content: "Mia is allergic to peanuts and always carries an epinephrine pen.",
  },
  menu: {
    key: "kb-menu",
    content: "The cafeteria menu lists the foods served to every user this week.",
  },
  ferry: {
    key: "kb-ferry",
    content: "The ferry to the island leaves at nine and returns before dusk.",
  },
} satisfies Record<string, SearchEntry>;

export const GENERAL_CORPUS: readonly SearchEntry[] = Object.values(GENERAL_ENTRIES);

/** One word of an entry, as written in it. */
export const WORD_QUERY = { query: "lighthouse", expected: GENERAL_ENTRIES.lighthouse };

/** Another inflection of a word in the entry ("planting"); "planted" itself is in no entry. */
export const STEMMED_QUERY = { query: "planted", expected: GENERAL_ENTRIES.planting };

/** A question: "what", "foods", "is", "to" are not in the answer; "Mia" and "allergic" are. */
export const QUESTION_QUERY = { query: "What foods is Mia allergic to?", expected: GENERAL_ENTRIES.allergy };

/** Matches nothing in any corpus here. */
export const NO_MATCH_QUERY = "xylophone";

/** The entry with every query word must outrank entries with one each. It is written last. */
export const MORE_TERMS = {
  query: "solar panel inverter",
  expected: { key: "kb-roof", content: "The solar panel inverter on the barn roof was replaced in May." },
  others: [
    { key: "kb-eclipse", content: "Solar eclipse glasses are kept in the kitchen drawer." },
    { key: "kb-dishwasher", content: "The control panel of the dishwasher shows error code four." },
  ],
};

/** "window" is in four entries, "quartz" in one: the rarer word's entry must come first. Written last. */
export const RARER_TERM = {
  query: "quartz window",
  expected: { key: "kb-quartz", content: "The quartz countertop needs resealing once every year." },
  others: [
    { key: "kb-bedroom", content: "The bedroom window sticks whenever the weather turns humid." },
    { key: "kb-cleaner", content: "A window cleaner visits on the first Monday of each month." },
    { key: "kb-garage", content: "The garage window faces the orchard behind the house." },
    { key: "kb-storm", content: "Close every window before the storm arrives tonight." },
  ],
};

const ANIMALS = [
  "albatross",
  "badger",
  "cormorant",
  "dolphin",
  "egret",
  "falcon",
  "gannet",
  "heron",
  "ibis",
  "jackdaw",
  "kestrel",
  "lapwing",
  "magpie",
  "nightjar",
  "osprey",
  "puffin",
  "quail",
  "raven",
  "starling",
  "tern",
];

/** `count` entries that all match `CAPPED_QUERY`. */
export function cappedCorpus(count: number): SearchEntry[] {
  return Array.from({ length: count }, (_, index) => {
    const name = ANIMALS[index % ANIMALS.length] as string;
    const round = Math.floor(index / ANIMALS.length);
    const tag = round === 0 ? name : `${name} round ${round + 1}`;
    return {
      key: `kb-capped-${String(index).padStart(3, "0")}`,
      content: `Lighthouse log: ${tag} sighted at dawn.`,
    };
  });
}

export const CAPPED_QUERY = "lighthouse";

/** Entries for the hostile-query checks. The narwhal-only entry is written before the full match. */
export const HOSTILE_ENTRIES = {
  smoothie: { key: "kb-smoothie", content: "A mango and papaya smoothie, not too sweet." },
  pantry: { key: "kb-pantry", content: "The content of the pantry: rice, beans and lentils." },
  tusk: { key: "kb-tusk", content: "The narwhal tusk is a long spiral tooth." },
  sighting: { key: "kb-sighting", content: "A walrus or a narwhal could be seen from the ferry." },
} satisfies Record<string, SearchEntry>;

export const HOSTILE_CORPUS: readonly SearchEntry[] = Object.values(HOSTILE_ENTRIES);

/**
 * Queries whose operators must be read as text. Each names the entry a plain-text reading finds (and
 * an FTS syntax reading would not), or an entry that must not be found.
 */
export const SYNTAX_CHECKS: readonly {
  name: string;
  query: string;
  finds?: SearchEntry;
  notFound?: SearchEntry;
  /** Must rank before this entry when both are returned. */
  before?: SearchEntry;
}[] = [
  {
    name: "NOT is a word, not exclusion",
    query: "mango NOT papaya",
    finds: HOSTILE_ENTRIES.smoothie,
  },
  { name: "a leading minus is not exclusion", query: "mango -papaya", finds: HOSTILE_ENTRIES.smoothie },
  {
    name: "double quotes do not make a phrase",
    query: '"smoothie papaya"',
    finds: HOSTILE_ENTRIES.smoothie,
  },
  { name: "a caret does not anchor to the first word", query: "^papaya", finds: HOSTILE_ENTRIES.smoothie },
  { name: "an asterisk is not a prefix operator", query: "mang*", notFound: HOSTILE_ENTRIES.smoothie },
  {
    name: "OR does not let a partial match outrank a full one",
    query: "walrus OR narwhal",
    finds: HOSTILE_ENTRIES.sighting,
    before: HOSTILE_ENTRIES.tusk,
  },
  {
    name: "content: is the word content, not a column filter",
    query: "content:",
    finds: HOSTILE_ENTRIES.pantry,
  },
];
