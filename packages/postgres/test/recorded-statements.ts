import type pg from "pg";

/** A statement as it reached the driver: its text and its values. */
export interface RecordedStatement {
  text: string;
  values: unknown[];
}

/** The statements sent on `client` from now on, text and values, however the adapter sends them. */
export function recordStatements(client: pg.Client): RecordedStatement[] {
  const sent: RecordedStatement[] = [];
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as unknown as { query: (...args: unknown[]) => unknown }).query = (first, values, callback) => {
    const config = first as { text?: string; values?: unknown[] } | string;
    if (typeof config === "string") sent.push({ text: config, values: (values as unknown[]) ?? [] });
    else if (typeof config?.text === "string") sent.push({ text: config.text, values: config.values ?? [] });
    return query(first, values, callback);
  };
  return sent;
}
