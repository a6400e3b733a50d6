import { SessionBuilder, type SessionMessage } from "@contextblocks/sessions";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { backends, type OpenBackend } from "../src/backends.js";

/*
 * One word, two Unicode forms: macOS and some keyboards send text decomposed (NFD: "한" as its three jamo,
 * "é" as "e" and a combining accent), most clients composed (NFC). A search finds the word whichever form the
 * message was stored in and the query was written in, on every backend.
 */

function message(id: string, text: string, role = "user"): SessionMessage {
  return { id, role, parts: [{ type: "text", text }] };
}

/** A sentence and the word in it to search for, in Korean, Greek, Cyrillic, Latin with a diacritic and Japanese. */
const words = [
  { text: "오늘 한국어 수업이 있어요", word: "한국어" },
  { text: "Ο καφές είναι έτοιμος", word: "καφές" },
  { text: "Мой родной край далеко", word: "край" },
  { text: "We met at the café downtown", word: "café" },
  { text: "わたしは ラジオが すきです", word: "ラジオが" },
];

const forms = ["NFC", "NFD"] as const;

describe.each(backends)("a search on $name", (underTest) => {
  let opened: OpenBackend;
  beforeEach(async () => {
    opened = await underTest.open();
  });
  afterEach(() => opened.close());

  it("finds a word whatever Unicode form the message was stored in and the query written in", async () => {
    const found: string[] = [];
    const expected: string[] = [];
    for (const [index, { text, word }] of words.entries()) {
      for (const stored of forms) {
        const sessionId = `${index}-${stored}`;
        const session = new SessionBuilder(opened.backend).forSession(sessionId).build();
        await session.appendMessage(message(`${sessionId}-said`, text.normalize(stored)));
        await session.appendMessage(message(`${sessionId}-reply`, "Noted, thank you.", "assistant"));
        await session.appendMessage(message(`${sessionId}-other`, "Something else entirely."));
        for (const written of forms) {
          const hits = await session.search(word.normalize(written), { limit: 5 });
          const label = `${word}: stored ${stored}, searched ${written}`;
          expected.push(label);
          if (hits.some((hit) => hit.id === `${sessionId}-said`)) found.push(label);
        }
      }
    }
    expect(found).toEqual(expected);
  });
});
