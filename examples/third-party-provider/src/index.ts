export { JsonFileContextProvider, type JsonFileContextProviderOptions } from "./json-file-provider.js";
