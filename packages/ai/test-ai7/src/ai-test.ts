/**
 * ai 7's `ai/test`, with `MockLanguageModelV4` standing in for `MockLanguageModelV3`: the adapter's test files
 * import the V3 mock by name (ai 6 has no V4), and on ai 7 they run on the V4 model 7's providers implement.
 * The V3 mock itself, which ai 7 still accepts, is `OriginalMockLanguageModelV3`.
 */
export * from "../node_modules/ai/dist/test/index.js";
export {
  MockLanguageModelV3 as OriginalMockLanguageModelV3,
  MockLanguageModelV4 as MockLanguageModelV3,
} from "../node_modules/ai/dist/test/index.js";
