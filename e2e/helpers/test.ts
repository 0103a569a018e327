/**
 * Playwright's `test`, with a `request` fixture that checks every API answer it receives against the
 * server's OpenAPI document (./openapi.ts): a response that does not match fails the test. Specs
 * that call the API import `test` from here.
 */
import { test as base, type APIRequestContext, type APIResponse } from "@playwright/test";
import { checkAgainstOpenApi } from "./openapi";

export { expect } from "@playwright/test";

const METHODS = { get: "GET", head: "HEAD", post: "POST", put: "PUT", delete: "DELETE", patch: "PATCH" } as const;

/** `request` with each response checked before the test sees it. */
export function checked(request: APIRequestContext): APIRequestContext {
  return new Proxy(request, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== "function") return value;
      const method = prop === "fetch" ? null : (METHODS as Record<string | symbol, string>)[prop];
      if (method === undefined) return value.bind(target);
      return async (url: string, options?: { method?: string }) => {
        const response = (await (value as (u: string, o?: object) => Promise<APIResponse>).call(target, url, options)) as APIResponse;
        await checkAgainstOpenApi(response, method ?? options?.method ?? "GET");
        return response;
      };
    },
  });
}

export const test = base.extend<{ request: APIRequestContext }>({
  request: async ({ request }, use) => {
    await use(checked(request));
  },
});
