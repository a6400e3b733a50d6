import { ENDPOINTS } from "./endpoints.js";
import type {
  AgentSnapshot,
  BlockView,
  CompactionView,
  SessionView,
  ToolView,
  TranscriptLine,
  TreeNodeView,
} from "./snapshot.js";

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ESCAPES[character] ?? character);
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/**
 * The inspector page: every block with its marker and usage, the frozen prompt, the pending reminder, the
 * tools the model gets, the end of the conversation as the next turn sends it, the conversations of the
 * agent's session manager, each one's message tree (branches, the active path) and its compactions. Plain HTML and CSS, no script, no external asset;
 * every value from storage is escaped.
 */
export function renderInspector(snapshot: AgentSnapshot): string {
  const agent = escapeHtml(snapshot.agent);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent ${agent} · contextblocks inspector</title>
<link rel="icon" href="data:,">
<style>${STYLES}</style>
</head>
<body>
<a class="skip" href="#blocks-heading">Skip to blocks</a>
<header class="page-header">
  <p class="eyebrow">contextblocks inspector</p>
  <h1>Agent <code>${agent}</code></h1>
  <dl class="facts">
    <div><dt>Model</dt><dd>${modelFact(snapshot)}</dd></div>
    <div><dt>Today</dt><dd>${escapeHtml(snapshot.date.today)}${snapshot.date.override ? ' <span class="tag">override</span>' : ""}</dd></div>
    <div><dt>Frozen prompt</dt><dd><code title="${escapeHtml(snapshot.promptSha256)}">sha256 ${escapeHtml(snapshot.promptSha256.slice(0, 12))}…</code> · ${snapshot.promptTokens} tokens</dd></div>
    <div><dt>Conversation</dt><dd>${snapshot.transcript.count} messages on the path · ${snapshot.sessions.length} conversation${snapshot.sessions.length === 1 ? "" : "s"}</dd></div>
    <div><dt>Compaction</dt><dd>~${snapshot.compaction.historyTokens} of ${snapshot.compaction.afterTokens} tokens</dd></div>
  </dl>
</header>
<main>
<section aria-labelledby="blocks-heading">
  <h2 id="blocks-heading">Blocks</h2>
  <p class="hint">In prompt order. A block's storage is written at once; the frozen prompt changes only at a refresh.</p>
  <ol class="blocks">
${snapshot.blocks.map(renderBlock).join("\n")}
  </ol>
</section>
<section aria-labelledby="reminder-heading">
  <h2 id="reminder-heading">Pending reminder</h2>
  ${renderReminder(snapshot.reminder)}
</section>
<section aria-labelledby="prompt-heading">
  <h2 id="prompt-heading">Frozen system prompt</h2>
  <p class="hint">Byte for byte what the model receives as <code>system</code>, on every turn and after a cold start.</p>
  <pre class="prompt" tabindex="0" aria-label="Frozen system prompt">${escapeHtml(snapshot.prompt)}</pre>
</section>
<section aria-labelledby="tools-heading">
  <h2 id="tools-heading">Tools the model gets</h2>
  ${snapshot.tools.length === 0 ? '<p class="empty">None: every block is read-only.</p>' : `<ul class="tools">\n${snapshot.tools.map(renderTool).join("\n")}\n  </ul>`}
</section>
<section aria-labelledby="transcript-heading">
  <h2 id="transcript-heading">Transcript</h2>
  <p class="hint">The current conversation as the next turn sends it: a compaction's summary stands in for the messages it covers.</p>
  ${renderTranscript(snapshot.transcript.recent, snapshot.transcript.count)}
</section>
<section aria-labelledby="sessions-heading">
  <h2 id="sessions-heading">Conversations</h2>
  <p class="hint">Sessions of the agent's <code>SessionManager</code>, most recently written first; turns go to the first unless a request names another.</p>
  ${renderSessions(snapshot.sessions)}
</section>
<section aria-labelledby="tree-heading">
  <h2 id="tree-heading">Message trees</h2>
  <p class="hint">Every stored message. An edit starts a branch beside the message it edits; the path to the latest leaf (marked) is what the next turn continues. Compaction never changes stored messages: an overlay reads a range as its summary. Compacts after ~${snapshot.compaction.afterTokens} tokens of prompt and history, keeping the first ${snapshot.compaction.protectHead} messages and ~${snapshot.compaction.tailTokenBudget} tokens of the newest.</p>
  ${snapshot.sessions.length === 0 ? '<p class="empty">No conversation yet.</p>' : snapshot.sessions.map(renderSessionTree).join("\n")}
</section>
<section aria-labelledby="endpoints-heading">
  <h2 id="endpoints-heading">Endpoints</h2>
  <pre>${escapeHtml(ENDPOINTS.join("\n"))}</pre>
</section>
</main>
</body>
</html>
`;
}

function modelFact(snapshot: AgentSnapshot): string {
  const name = `<code>${escapeHtml(snapshot.model)}</code>`;
  return snapshot.offline ? `${name} <span class="tag">offline scripted model</span>` : name;
}

function renderBlock(block: BlockView): string {
  const id = `block-${slug(block.label)}`;
  const tags = [
    `<span class="marker marker-${block.kind}">[${block.kind}]</span>`,
    block.whenChanged === "remind" ? '<span class="tag">whenChanged: remind</span>' : "",
  ].join(" ");
  const status = block.matchesFrozenPrompt
    ? '<p class="status status-current">Same as in the frozen prompt.</p>'
    : `<p class="status status-changed">Changed since the prompt was frozen: ${
        block.whenChanged === "remind"
          ? "sent as a reminder until a refresh"
          : "reaches the prompt at the next refresh"
      }.</p>`;
  return `    <li class="block" data-label="${escapeHtml(block.label)}">
      <article aria-labelledby="${id}">
        <header class="block-header">
          <h3 id="${id}">${escapeHtml(block.label.toUpperCase())}</h3>
          ${tags}
        </header>
        ${block.description ? `<p class="description">${escapeHtml(block.description)}</p>` : ""}
        ${renderUsage(block)}
        ${status}
        ${renderLoaded(block)}
        <pre class="content" tabindex="0" aria-label="${escapeHtml(block.label)} content">${
          block.content.length > 0 ? escapeHtml(block.content) : '<span class="empty">(empty)</span>'
        }</pre>
      </article>
    </li>`;
}

/** For a loadable block: what the conversation has loaded (and not unloaded), which the prompt never lists. */
function renderLoaded(block: BlockView): string {
  if (block.loaded === undefined) return "";
  const keys = block.loaded.map((key) => `<code>${escapeHtml(key)}</code>`).join(", ");
  return `<p class="loaded">${keys === "" ? "Nothing loaded in the conversation." : `Loaded in the conversation: ${keys}.`}</p>`;
}

/** A usage bar against `maxTokens`; a block without a limit shows its size on an unfilled track. */
function renderUsage(block: BlockView): string {
  if (block.maxTokens === undefined || block.usagePercent === undefined) {
    const text = `${block.tokens} tokens, no limit`;
    return `<div class="usage">
          <div class="bar bar-unlimited" role="img" aria-label="${escapeHtml(`${block.label}: ${text}`)}"><span style="width:0%"></span></div>
          <span class="usage-text">${text}</span>
        </div>`;
  }
  const percent = block.usagePercent;
  const width = Math.max(0, Math.min(100, percent));
  const level = percent >= 90 ? "high" : percent >= 70 ? "medium" : "low";
  const text = `${percent}% — ${block.tokens}/${block.maxTokens} tokens`;
  return `<div class="usage">
          <div class="bar bar-${level}" role="meter" aria-label="${escapeHtml(`${block.label} usage`)}" aria-valuemin="0" aria-valuemax="${block.maxTokens}" aria-valuenow="${Math.min(block.tokens, block.maxTokens)}" aria-valuetext="${escapeHtml(text)}"><span style="width:${width}%"></span></div>
          <span class="usage-text">${escapeHtml(text)}</span>
        </div>`;
}

function renderReminder(reminder: string | null): string {
  if (reminder === null) {
    return '<p class="empty" id="reminder-none">None. Every <code>whenChanged: "remind"</code> block matches the frozen prompt.</p>';
  }
  return `<p class="hint">Attached to the newest user message of the next turn (not stored, not in the system prompt) until a refresh.</p>
  <pre class="reminder" tabindex="0" aria-label="Pending reminder">${escapeHtml(reminder)}</pre>`;
}

function renderTool(tool: ToolView): string {
  return `    <li class="tool">
      <h3><code>${escapeHtml(tool.name)}</code></h3>
      <pre class="tool-description">${escapeHtml(tool.description)}</pre>
      <details>
        <summary>Input schema</summary>
        <pre>${escapeHtml(JSON.stringify(tool.inputSchema, null, 2))}</pre>
      </details>
    </li>`;
}

function renderTranscript(lines: readonly TranscriptLine[], count: number): string {
  if (lines.length === 0)
    return '<p class="empty">No messages yet. POST a message to <code>/chat</code>.</p>';
  const shown =
    count > lines.length ? `<p class="hint">The last ${lines.length} of ${count} messages.</p>` : "";
  return `${shown}<ol class="transcript">
${lines
  .map(
    (line) =>
      `    <li class="message message-${escapeHtml(line.role)}${line.summary ? " message-summary" : ""}"><span class="role">${line.summary ? "summary" : escapeHtml(line.role)}</span><pre>${escapeHtml(line.text)}</pre></li>`,
  )
  .join("\n")}
  </ol>`;
}

function renderSessions(sessions: readonly SessionView[]): string {
  if (sessions.length === 0)
    return '<p class="empty">None yet: the first turn starts one. <code>POST /sessions</code> starts another.</p>';
  const rows = sessions.map(
    (
      session,
    ) => `    <tr data-session="${escapeHtml(session.id)}"${session.current ? ' aria-current="true"' : ""}>
      <td>${escapeHtml(session.name)}${session.current ? ' <span class="tag">current</span>' : ""}</td>
      <td><code title="${escapeHtml(session.id)}">${escapeHtml(shortId(session.id))}</code></td>
      <td>${session.pathLength}</td>
      <td>${session.storedMessages}</td>
      <td>${session.compactions.length}</td>
      <td>${session.inputTokens} / ${session.outputTokens}</td>
      <td>${escapeHtml(session.updatedAt)}</td>
    </tr>`,
  );
  return `<table class="sessions">
    <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">On the path</th><th scope="col">Stored</th><th scope="col">Compactions</th><th scope="col">Tokens in / out</th><th scope="col">Updated (UTC)</th></tr></thead>
    <tbody>
${rows.join("\n")}
    </tbody>
  </table>`;
}

function renderSessionTree(session: SessionView): string {
  const children = new Map<string | null, TreeNodeView[]>();
  for (const node of session.tree) {
    const siblings = children.get(node.parentId);
    if (siblings === undefined) children.set(node.parentId, [node]);
    else siblings.push(node);
  }
  const roots = children.get(null) ?? [];
  const more =
    session.storedMessages > session.tree.length
      ? `<p class="hint">The first ${session.tree.length} of ${session.storedMessages} messages.</p>`
      : "";
  const tree =
    roots.length === 0
      ? '<p class="empty">No messages.</p>'
      : roots.length === 1
        ? `<ol class="chain">${renderChain(roots[0] as TreeNodeView, children)}</ol>`
        : renderBranches(roots, children);
  return `<details class="session-tree" data-session="${escapeHtml(session.id)}"${session.current ? " open" : ""}>
    <summary>${escapeHtml(session.name)} <code>${escapeHtml(shortId(session.id))}</code>${session.current ? ' <span class="tag">current</span>' : ""}</summary>
    ${more}
    <div class="tree">${tree}</div>
    <h3 class="overlays-heading">Compactions</h3>
    ${
      session.compactions.length === 0
        ? '<p class="empty">None yet.</p>'
        : `<ol class="overlays">${session.compactions.map(renderOverlay).join("\n")}</ol>`
    }
  </details>`;
}

/** A run of messages each with one child, in one list; a branch point opens a nested list per branch. */
function renderChain(start: TreeNodeView, children: ReadonlyMap<string | null, TreeNodeView[]>): string {
  const items: string[] = [];
  let node: TreeNodeView | undefined = start;
  while (node !== undefined) {
    items.push(renderNode(node));
    const kids: TreeNodeView[] = children.get(node.id) ?? [];
    if (kids.length > 1) {
      items.push(`<li class="branch-point">${renderBranches(kids, children)}</li>`);
      break;
    }
    node = kids[0];
  }
  return items.join("");
}

function renderBranches(
  starts: readonly TreeNodeView[],
  children: ReadonlyMap<string | null, TreeNodeView[]>,
): string {
  return `<ol class="branches">${starts
    .map(
      (start, index) =>
        `<li class="branch${start.onPath ? " branch-active" : ""}"><p class="branch-label">Branch ${index + 1} of ${starts.length}${start.onPath ? " · active" : ""}</p><ol class="chain">${renderChain(start, children)}</ol></li>`,
    )
    .join("")}</ol>`;
}

function renderNode(node: TreeNodeView): string {
  const classes = [
    "node",
    `node-${slug(node.role)}`,
    node.onPath ? "on-path" : "off-path",
    node.compactedBy !== null ? "compacted" : "",
  ].filter((name) => name !== "");
  const tags = [
    node.latestLeaf ? '<span class="tag">latest leaf</span>' : "",
    node.compactedBy !== null
      ? `<span class="tag tag-compacted">summarised by ${escapeHtml(shortId(node.compactedBy))}</span>`
      : "",
  ].join(" ");
  return `<li class="${classes.join(" ")}" data-id="${escapeHtml(node.id)}" data-role="${escapeHtml(node.role)}"${node.onPath ? ' aria-current="step"' : ""}><div class="node-head"><span class="role">${escapeHtml(node.role)}</span> <code title="${escapeHtml(node.id)}">${escapeHtml(shortId(node.id))}</code> ${tags}</div><pre>${escapeHtml(node.text)}</pre></li>`;
}

function renderOverlay(overlay: CompactionView): string {
  const count = overlay.messageIds.length;
  return `<li class="overlay" data-compaction="${escapeHtml(overlay.id)}">
      <p><strong>${escapeHtml(shortId(overlay.id))}</strong>: messages <code title="${escapeHtml(overlay.fromMessageId)}">${escapeHtml(shortId(overlay.fromMessageId))}</code> … <code title="${escapeHtml(overlay.toMessageId)}">${escapeHtml(shortId(overlay.toMessageId))}</code>${count > 0 ? ` (${count} messages)` : ""} read as this summary${overlay.onActivePath ? " in the history sent to the model" : ", on another branch"}.</p>
      <pre class="summary" tabindex="0" aria-label="Summary ${escapeHtml(shortId(overlay.id))}">${escapeHtml(overlay.summary)}</pre>
    </li>`;
}

/** The first 8 characters of an id (the full id is in the element's title). */
function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}

function slug(label: string): string {
  return label.toLowerCase().replace(/[^a-z0-9]+/g, "-") || "block";
}

const STYLES = `
:root {
  color-scheme: light dark;
  --bg: #f7f7f5; --panel: #ffffff; --text: #1d1f21; --muted: #5b6066; --line: #d9dcdf;
  --accent: #2457c5; --low: #2f8f46; --medium: #b7791f; --high: #c53030; --track: #e6e8eb;
  --code-bg: #f1f2f4;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #16181b; --panel: #1e2125; --text: #e8eaed; --muted: #a4a9b0; --line: #33383e;
    --accent: #8ab4ff; --low: #5cc27a; --medium: #e0a740; --high: #f07070; --track: #2c3136;
    --code-bg: #25292e;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--text);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--panel); padding: .5rem; z-index: 1; }
.page-header, main { max-width: 72rem; margin: 0 auto; padding: 1.25rem 1.5rem; }
.page-header { padding-bottom: .5rem; }
.eyebrow { margin: 0; color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .08em; }
h1 { margin: .2rem 0 .8rem; font-size: 1.6rem; }
h2 { font-size: 1.15rem; margin: 1.8rem 0 .4rem; }
h3 { margin: 0; font-size: 1rem; letter-spacing: .03em; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .85rem; }
pre { margin: .5rem 0 0; padding: .75rem; background: var(--code-bg); border-radius: 6px;
  white-space: pre-wrap; overflow-wrap: anywhere; max-height: 28rem; overflow: auto; }
.facts { display: flex; flex-wrap: wrap; gap: .5rem 2rem; margin: 0; }
.facts div { min-width: 10rem; }
.facts dt { color: var(--muted); font-size: .8rem; }
.facts dd { margin: 0; }
.hint, .description { color: var(--muted); margin: .2rem 0 .6rem; }
.empty { color: var(--muted); font-style: italic; }
.blocks, .tools, .transcript { list-style: none; padding: 0; margin: 0; }
.blocks { display: grid; grid-template-columns: repeat(auto-fill, minmax(26rem, 1fr)); gap: 1rem; }
.block article, .tool { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 1rem; height: 100%; }
.block-header { display: flex; flex-wrap: wrap; align-items: baseline; gap: .5rem; }
.marker { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .8rem; padding: .05rem .4rem;
  border-radius: 4px; border: 1px solid currentColor; }
.marker-readonly { color: var(--muted); }
.marker-writable { color: var(--low); }
.marker-searchable, .marker-loadable { color: var(--accent); }
.tag { font-size: .75rem; padding: .05rem .45rem; border-radius: 999px; background: var(--track); color: var(--text); }
.usage { display: flex; align-items: center; gap: .6rem; margin: .4rem 0; }
.bar { flex: 1; height: .6rem; background: var(--track); border-radius: 999px; overflow: hidden; }
.bar span { display: block; height: 100%; border-radius: 999px; }
.bar-low span { background: var(--low); }
.bar-medium span { background: var(--medium); }
.bar-high span { background: var(--high); }
.bar-unlimited { background: repeating-linear-gradient(90deg, var(--track) 0 6px, transparent 6px 10px); }
.usage-text { font-size: .8rem; color: var(--muted); white-space: nowrap; }
.status { font-size: .85rem; margin: .3rem 0; }
.status-changed { color: var(--medium); font-weight: 600; }
.status-current { color: var(--muted); }
.content { max-height: 12rem; }
.tools { display: grid; gap: 1rem; }
.tool-description { background: transparent; padding: 0; }
details summary { cursor: pointer; color: var(--accent); margin-top: .5rem; }
.transcript li { display: grid; grid-template-columns: 5.5rem 1fr; gap: .5rem; margin-bottom: .4rem; }
.transcript pre { margin: 0; }
.role { color: var(--muted); font-size: .85rem; padding-top: .6rem; }
.prompt, .reminder { max-height: 36rem; }
.message-summary pre { border-left: 3px solid var(--medium); }
.sessions { border-collapse: collapse; width: 100%; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; }
.sessions th, .sessions td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid var(--line); font-size: .9rem; }
.sessions th { color: var(--muted); font-weight: 600; font-size: .8rem; }
.session-tree { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: .6rem 1rem; margin-bottom: 1rem; }
.session-tree > summary { font-weight: 600; margin: 0; }
.tree ol { list-style: none; margin: 0; padding: 0; }
.tree .branches { display: grid; gap: .6rem; margin: .4rem 0 .4rem 1.2rem; padding-left: .8rem; border-left: 2px dashed var(--line); }
.branch-label { margin: 0 0 .2rem; font-size: .8rem; color: var(--muted); }
.branch-active > .branch-label { color: var(--accent); font-weight: 600; }
.node { margin: .3rem 0; padding-left: .6rem; border-left: 3px solid transparent; }
.node.on-path { border-left-color: var(--accent); }
.node.off-path { opacity: .72; }
.node.compacted pre { background: repeating-linear-gradient(135deg, var(--code-bg) 0 8px, var(--track) 8px 16px); }
.node-head { font-size: .8rem; color: var(--muted); }
.node pre { margin-top: .2rem; max-height: 8rem; }
.tag-compacted { background: var(--medium); color: #1d1f21; }
.overlays-heading { margin-top: 1rem; font-size: .95rem; }
.overlays { list-style: none; padding: 0; margin: 0; }
.overlay p { margin: .3rem 0; }
.summary { border-left: 3px solid var(--medium); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
`;
