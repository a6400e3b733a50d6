export { agentsHost } from "./agents-host.js";
export { openTemporaryDatabase, type TemporaryDatabase } from "./temporary-database.js";
