/** The endpoints, also served at `GET /`. */
export const ENDPOINTS = [
  "GET  /agents/:id          redirects to /agents/:id/inspector/ (the inspector page, with INSPECTOR_TOKEN)",
  "GET  /agents/:id/prompt   the frozen system prompt (text/plain)",
  "GET  /agents/:id/blocks   blocks, pending reminder, tools (JSON)",
  "GET  /agents/:id/history?label=memory&limit=20  a block's versions, newest first (JSON)",
  'POST /agents/:id/restore  {"label": "memory", "version": 3}: write an earlier version again',
  'POST /agents/:id/chat     {"message": "...", "session"?: "..."}: run one turn',
  'POST /agents/:id/edit     {"messageId": "...", "message": "..."}: edit a user message (a new branch)',
  'POST /agents/:id/sessions {"name"?: "..."}: start a new conversation',
  "POST /agents/:id/refresh  re-render the prompt from the blocks",
  'PUT  /agents/:id/date     {"date": "YYYY-MM-DD" | null}: override today\'s date',
] as const;
