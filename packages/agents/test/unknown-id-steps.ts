/** The history reads and deletes a session and a session provider both have, as the differential tests call them. */
interface HistoryOperations {
  deleteMessages(ids: string[]): unknown;
  getMessage(id: string): unknown;
  getBranches(id: string): unknown;
  getHistory(leafId?: string | null): unknown;
  getPathLength(leafId?: string | null): unknown;
}

/**
 * Steps of a differential test that ask for ids and leaves the session does not hold (and delete nothing), then
 * the branches at `storedId`: what each answers (empty, `null`, or a throw) must be agents'.
 */
export function unknownIdSteps<Operations extends HistoryOperations>(
  storedId: string,
): (readonly [label: string, run: (operations: Operations) => unknown])[] {
  return [
    ["delete unknown ids", (operations) => operations.deleteMessages(["nope", "also-nope"])],
    ["delete nothing", (operations) => operations.deleteMessages([])],
    ["getMessage unknown", (operations) => operations.getMessage("nope")],
    ["getBranches unknown", (operations) => operations.getBranches("nope")],
    ["getBranches", (operations) => operations.getBranches(storedId)],
    ["getHistory unknown leaf", (operations) => operations.getHistory("nope")],
    ["getPathLength unknown leaf", (operations) => operations.getPathLength("nope")],
    ["getHistory empty leaf", (operations) => operations.getHistory("")],
    ["getHistory null leaf", (operations) => operations.getHistory(null)],
  ];
}
