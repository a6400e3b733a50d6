/**
 * A message for the randomized differentials, whose parts' shape the text's length picks (text; reasoning and
 * text; a step start and a tool call without text; two texts; no parts) and whether it carries metadata: so
 * generated sequences meet every shape search and storage read differently, without another generated field.
 */
export function messageOfText(id: string, role: string, text: string): never {
  const shapes: unknown[][] = [
    [{ type: "text", text }],
    [
      { type: "reasoning", text },
      { type: "text", text: `${text} ferry` },
    ],
    [
      { type: "step-start" },
      {
        type: "tool-weather",
        toolCallId: "c",
        state: "output-available",
        input: { city: text },
        output: { t: 3 },
      },
    ],
    [
      { type: "text", text },
      { type: "text", text: "nine" },
    ],
    [],
  ];
  const parts = shapes[text.length % shapes.length];
  return { id, role, parts, ...(text.length % 3 === 0 ? { metadata: { note: text } } : {}) } as never;
}
