import type { ContextBlocks } from "@contextblocks/core";

/**
 * The text to hand core's `appendToBlock` so that a writable block ends as agents' append leaves it. agents
 * puts a line break between the block's text and the appended text unless the appended text starts with one,
 * also when the block's text ends with one (a blank line between); core adds none there. Other blocks'
 * appends are passed on as they are. As agents, the block's text is the one last read.
 */
export function agentsAppendText(context: ContextBlocks, label: string, content: string): string {
  if (content.startsWith("\n")) return content;
  const block = context.getBlock(label);
  if (block?.kind !== "writable") return content;
  return block.content.endsWith("\n") ? `\n${content}` : content;
}
