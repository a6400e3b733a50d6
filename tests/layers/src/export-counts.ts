import { audiences, countEntries } from "./export-budget.js";
import { workspacePackages } from "./import-closure.js";

/** Prints the number of exported names (values and types) of every entry of every package. */
const counted = countEntries(workspacePackages()).sort((left, right) =>
  left.entry.localeCompare(right.entry),
);
console.log("| entry | audience | exported names |\n| --- | --- | --- |");
let applicationTotal = 0;
for (const { entry, names } of counted) {
  if (audiences[entry] === "application") applicationTotal += names.length;
  console.log(`| ${entry} | ${audiences[entry] ?? "unclassified"} | ${names.length} |`);
}
console.log(`| application entries | | ${applicationTotal} |`);
