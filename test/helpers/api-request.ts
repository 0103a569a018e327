/** A GET of the API as a test asks it (web/api.ts `answer`): one client, no headers. */
import type { ApiRequest } from "../../web/api";

export const apiGet = (path: string, params: Record<string, string> | URLSearchParams = {}): ApiRequest => ({
  method: "GET",
  path,
  params: new URLSearchParams(params),
  client: "test",
  header: () => null,
});
