/** The page's CSS: no external asset. */
export const STYLES = `
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
.facts div { min-width: min(10rem, 100%); }
.facts dd { overflow-wrap: anywhere; }
code { overflow-wrap: anywhere; }
.facts dt { color: var(--muted); font-size: .8rem; }
.facts dd { margin: 0; }
.hint, .description { color: var(--muted); margin: .2rem 0 .6rem; }
.empty { color: var(--muted); font-style: italic; }
.blocks, .tools, .transcript { list-style: none; padding: 0; margin: 0; }
.blocks { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(26rem, 100%), 1fr)); gap: 1rem; }
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
.transcript li > * { min-width: 0; }
.role { color: var(--muted); font-size: .85rem; padding-top: .6rem; overflow-wrap: anywhere; }
.hit-session { display: block; font-size: .75rem; }
@media (max-width: 40rem) {
  .page-header, main { padding: 1rem .75rem; }
  .transcript li { grid-template-columns: 1fr; gap: 0; }
  .role { padding-top: 0; }
  .hit-session { display: inline; }
}
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
.tag-error { background: transparent; color: var(--high); border: 1px solid var(--high); }
.overlays-heading { margin-top: 1rem; font-size: .95rem; }
.overlays { list-style: none; padding: 0; margin: 0; }
.overlay p { margin: .3rem 0; }
.summary { border-left: 3px solid var(--medium); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.diff { list-style: none; padding: .5rem; margin: .5rem 0 0; background: var(--code-bg); border-radius: 6px; font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .85rem; white-space: pre-wrap; }
.diff li { padding: 0 .3rem; }
.diff .added { background: rgba(47, 143, 70, .18); }
.diff .added::before { content: "+ "; }
.diff .removed { background: rgba(197, 48, 48, .16); text-decoration: line-through; }
.diff .removed::before { content: "- "; }
.diff .same::before { content: "  "; }
.versions { list-style: none; padding: 0; margin: .4rem 0 0; }
.versions li { display: flex; gap: .6rem; align-items: baseline; padding: .2rem 0; border-top: 1px solid var(--line); }
button.restore { font: inherit; font-size: .85rem; padding: .1rem .6rem; border: 1px solid var(--accent); color: var(--accent); background: transparent; border-radius: 4px; cursor: pointer; }
.search-form { display: flex; gap: .5rem; }
.search-form input { flex: 1; font: inherit; padding: .3rem .5rem; }
.live { list-style: none; padding: 0; margin: 0; max-height: 16rem; overflow: auto; }
.live li { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .85rem; border-top: 1px solid var(--line); padding: .2rem 0; }
.live-status { font-size: .8rem; color: var(--muted); }
`;
