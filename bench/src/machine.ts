import { cpus, platform, release, totalmem } from "node:os";

/** The machine the figures were taken on, for the top of RESULTS.md. */
export function describeMachine(now: Date = new Date()): string {
  const processors = cpus();
  const model = processors[0]?.model.trim() ?? "unknown CPU";
  const memory = `${(totalmem() / 1024 ** 3).toFixed(1)} GiB`;
  return [
    `- Date: ${now.toISOString().slice(0, 16).replace("T", " ")} UTC`,
    `- CPU: ${model}, ${processors.length} logical cores`,
    `- Memory: ${memory}`,
    `- Node: ${process.version} on ${platform()} ${release()}`,
  ].join("\n");
}
