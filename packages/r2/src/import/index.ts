export type { SkillPutOptions, SkillPutTarget } from "../bucket.js";
export { type FrontMatter, parseFrontMatter } from "./front-matter.js";
export {
  type ImportedSkill,
  type ImportSkillsOptions,
  importSkillsDirectory,
  SKILL_FILE,
} from "./import-skills.js";
