// One throwaway cluster for the whole run; each test file works in its own schemas on it.
export { provideThrowawayCluster as default } from "@contextblocks/test-kit/postgres";
