import { clipped, wellFormedPrefix } from "@contextblocks/core/store-kit";
import { type DiffLine, diffLines } from "./diff.js";
import type { BlockVersionView } from "./history.js";
import type { BlockView, CompactionView, InspectorSnapshot, SessionView, TreeNodeView } from "./snapshot.js";
import { STYLES } from "./styles.js";

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
 * The page: blocks (with usage, whether they match the frozen prompt, and their history when the context
 * keeps one), the pending reminder, the frozen prompt with its SHA-256, search over the sessions, each
 * session's message tree with its compaction overlays, and a live list of lifecycle events. Every value
 * from storage is escaped; the one script (`app.js`, same origin) only opens the event stream and sends
 * restores.
 */
export function renderPage(snapshot: InspectorSnapshot, base: string): string {
  const title = escapeHtml(snapshot.title);
  const hash = snapshot.promptSha256;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · contextblocks inspector</title>
<link rel="icon" href="data:,">
<style>${STYLES}</style>
<script src="${escapeHtml(base)}/app.js" defer></script>
</head>
<body data-base="${escapeHtml(base)}">
<a class="skip" href="#blocks-heading">Skip to blocks</a>
<header class="page-header">
  <p class="eyebrow">contextblocks inspector</p>
  <h1>${title}</h1>
  <dl class="facts">
    <div><dt>Frozen prompt</dt><dd>${hash === null ? "none" : `<code id="prompt-hash" data-sha256="${hash}" title="${hash}">sha256 ${hash.slice(0, 12)}…</code> · ${snapshot.promptTokens} tokens`}</dd></div>
    <div><dt>Blocks</dt><dd>${snapshot.blocks.length}</dd></div>
    <div><dt>Sessions</dt><dd>${snapshot.sessions.length}</dd></div>
    <div><dt>Access</dt><dd>${snapshot.canRestore ? "read and restore" : "read-only"}</dd></div>
  </dl>
</header>
<main>
<section aria-labelledby="live-heading">
  <h2 id="live-heading">Live events</h2>
  <p class="live-status" id="live-status">Connecting…</p>
  <ol class="live" id="live-events" aria-live="polite"></ol>
</section>
<section aria-labelledby="blocks-heading">
  <h2 id="blocks-heading">Blocks</h2>
  <p class="hint">In prompt order. A block's storage is written at once; the frozen prompt changes only at a refresh.</p>
  ${snapshot.blocks.length === 0 ? '<p class="empty">No blocks.</p>' : `<ol class="blocks">\n${snapshot.blocks.map((block) => renderBlock(block, snapshot.canRestore)).join("\n")}\n  </ol>`}
</section>
<section aria-labelledby="reminder-heading">
  <h2 id="reminder-heading">Pending reminder</h2>
  ${snapshot.reminder === null ? '<p class="empty" id="reminder-none">None. Every <code>whenChanged: "remind"</code> block matches the frozen prompt.</p>' : `<p class="hint">Attached to the newest user message of the next turn (not stored, not in the system prompt) until a refresh.</p>\n  <pre class="reminder" tabindex="0" aria-label="Pending reminder">${escapeHtml(snapshot.reminder)}</pre>`}
</section>
<section aria-labelledby="prompt-heading">
  <h2 id="prompt-heading">Frozen system prompt</h2>
  <p class="hint">Byte for byte what the model receives as <code>system</code>${hash === null ? "" : ` (SHA-256 <code>${hash}</code>)`}. Until the first turn freezes it, the blocks as they read now: viewing this page never freezes it.</p>
  <pre class="prompt" tabindex="0" aria-label="Frozen system prompt">${escapeHtml(snapshot.prompt ?? "")}</pre>
</section>
<section aria-labelledby="search-heading">
  <h2 id="search-heading">Search</h2>
  <form class="search-form" method="get" action="${escapeHtml(base)}/" role="search">
    <label for="q" class="skip">Search messages</label>
    <input id="q" name="q" type="search" placeholder="Search the sessions' messages" value="${escapeHtml(snapshot.search?.query ?? "")}">
    <button type="submit">Search</button>
  </form>
  ${renderSearch(snapshot.search)}
</section>
<section aria-labelledby="tree-heading">
  <h2 id="tree-heading">Sessions</h2>
  <p class="hint">Every stored message as a tree: an edit starts a branch; the path to the latest leaf is what the next turn continues. Compaction never changes stored messages: an overlay reads a range as its summary.</p>
  ${renderSessions(snapshot)}
</section>
</main>
</body>
</html>
`;
}

function renderSearch(search: InspectorSnapshot["search"]): string {
  if (search === null) return "";
  if (search.error !== null) return `<p class="empty" id="search-error">${escapeHtml(search.error)}</p>`;
  if (search.results.length === 0)
    return `<p class="empty" id="search-none">No message matches “${escapeHtml(search.query)}”.</p>`;
  return `<ol class="transcript search-results">${search.results
    .map(
      (hit) =>
        // Two children, as every transcript row: the role (with the session) beside the text, never above it.
        `<li class="message message-${escapeHtml(hit.role)}" data-id="${escapeHtml(hit.id)}"><span class="role">${escapeHtml(hit.role)}${hit.sessionId ? ` <code class="hit-session">${escapeHtml(shortId(hit.sessionId))}</code>` : ""}</span><pre>${escapeHtml(hit.content)}</pre></li>`,
    )
    .join("\n")}</ol>`;
}

function renderBlock(block: BlockView, canRestore: boolean): string {
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
        <pre class="content" tabindex="0" aria-label="${escapeHtml(block.label)} content">${
          block.content.length > 0 ? escapeHtml(block.content) : '<span class="empty">(empty)</span>'
        }</pre>
        ${renderHistory(block, canRestore)}
      </article>
    </li>`;
}

/** The block's versions (newest first), each with a restore button, and the diff of the newest change. */
function renderHistory(block: BlockView, canRestore: boolean): string {
  const versions = block.history;
  if (versions === null) return "";
  if (versions.length === 0) return '<p class="empty history-none">No stored versions.</p>';
  const [newest, previous] = versions as [BlockVersionView, BlockVersionView | undefined];
  const diff = previous === undefined ? [] : diffLines(previous.content, newest.content);
  return `<details class="history" data-label="${escapeHtml(block.label)}">
          <summary>History: ${versions.length} version${versions.length === 1 ? "" : "s"}</summary>
          ${previous === undefined ? "" : `<p class="hint">Version ${previous.version} → ${newest.version}:</p>${renderDiff(diff)}`}
          <ol class="versions">${versions
            .map(
              (version) =>
                `<li data-version="${version.version}"><strong>v${version.version}</strong>${version.writtenAt ? ` <span class="hint">${escapeHtml(version.writtenAt)}</span>` : ""}${version.source ? ` <span class="tag">${escapeHtml(version.source)}</span>` : ""}${
                  canRestore && version !== newest
                    ? ` <button type="button" class="restore" data-label="${escapeHtml(block.label)}" data-version="${version.version}">Restore v${version.version}</button>`
                    : ""
                }<pre>${escapeHtml(clip(version.content))}</pre></li>`,
            )
            .join("")}</ol>
        </details>`;
}

function renderDiff(lines: readonly DiffLine[]): string {
  return `<ol class="diff">${lines.map((line) => `<li class="${line.kind}">${escapeHtml(line.text)}</li>`).join("")}</ol>`;
}

/** An old version's first 600 characters, never ending inside a surrogate pair. */
function clip(text: string): string {
  return clipped(text, 600);
}

/** A usage bar against `maxTokens`; a block without a limit shows its size on an unfilled track. */
function renderUsage(block: BlockView): string {
  if (block.maxTokens === null || block.usagePercent === null) {
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

function renderSessionTree(session: SessionView, open: boolean): string {
  if (session.error !== null) {
    return `<details class="session-tree session-broken" data-session="${escapeHtml(session.id)}"${open ? " open" : ""}>
    <summary>${escapeHtml(session.name)} <code>${escapeHtml(shortId(session.id))}</code> <span class="tag tag-error">unreadable</span></summary>
    <p class="empty session-error">This session could not be read: ${escapeHtml(session.error)}</p>
  </details>`;
  }
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
  return `<details class="session-tree" data-session="${escapeHtml(session.id)}"${open ? " open" : ""}>
    <summary>${escapeHtml(session.name)} <code>${escapeHtml(shortId(session.id))}</code></summary>
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
  return wellFormedPrefix(id, 8);
}

function slug(label: string): string {
  return label.toLowerCase().replace(/[^a-z0-9]+/g, "-") || "block";
}

/** The sessions' trees; why they could not be listed, when the registry failed; or that there is none. */
function renderSessions(snapshot: InspectorSnapshot): string {
  if (snapshot.sessionsError !== null) {
    return `<p class="empty session-error" id="sessions-error">The sessions could not be listed: ${escapeHtml(snapshot.sessionsError)}</p>`;
  }
  if (snapshot.sessions.length === 0) return '<p class="empty">No session.</p>';
  return snapshot.sessions.map((session, index) => renderSessionTree(session, index === 0)).join("\n");
}
