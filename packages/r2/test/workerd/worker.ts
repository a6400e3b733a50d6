export default {
  async fetch(): Promise<Response> {
    return new Response("contextblocks r2 test worker");
  },
} satisfies ExportedHandler;
