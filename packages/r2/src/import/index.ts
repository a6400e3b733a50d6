export type { SkillPutTarget } from "../bucket.js";
export { type ImportedSkill, type ImportSkillsOptions, importSkillsDirectory } from "./import-skills.js";
