/**
 * WebSub's verification of intent (W3C WebSub §5.3; docs/notices.md#websub): before a subscription
 * starts or ends, the hub asks the callback with a GET carrying `hub.mode`, `hub.topic`, a random
 * `hub.challenge` and (to subscribe) `hub.lease_seconds`; the callback agrees by answering 2xx with the
 * challenge as its whole body. Sent through the guarded callback client (./callbacks.ts).
 */
import { randomBytes } from "node:crypto";
import type { CallbackClient } from "./callbacks.ts";

export type Intent = { mode: "subscribe" | "unsubscribe"; topic: string; callback: string; leaseS: number | null };

/** Asks the callback to confirm `intent`; null when it did, else why not, in words. */
export async function verifyIntent(client: CallbackClient, intent: Intent): Promise<string | null> {
  const challenge = randomBytes(24).toString("base64url");
  const url = new URL(intent.callback);
  // The callback's own query is kept; the hub's parameters are added to it (§5.3).
  url.searchParams.append("hub.mode", intent.mode);
  url.searchParams.append("hub.topic", intent.topic);
  url.searchParams.append("hub.challenge", challenge);
  if (intent.mode === "subscribe" && intent.leaseS !== null) url.searchParams.append("hub.lease_seconds", String(intent.leaseS));
  const answer = await client.send(url.href, { method: "GET" });
  if (!answer.ok) return answer.error;
  if (answer.status < 200 || answer.status > 299) return `the callback answered the verification with HTTP ${answer.status}`;
  if (answer.body !== challenge) return "the callback did not answer the verification with its hub.challenge";
  return null;
}
