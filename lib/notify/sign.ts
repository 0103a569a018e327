/**
 * How deliveries are signed (docs/notices.md#signatures): webhooks in the Standard Webhooks form
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`
 * keyed by the secret's bytes after `whsec_`), WebSub with `X-Hub-Signature: sha256=<hex HMAC of the
 * body>` keyed by the subscriber's `hub.secret` (W3C WebSub §8).
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** A webhook's secret: `whsec_` and 32 random bytes in base64, as Standard Webhooks writes them. */
export const newWebhookSecret = (): string => `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString("base64")}`;

/** The Standard Webhooks headers of one attempt to send `body` as message `id` at `timestampS` (seconds). */
export function webhookHeaders(secret: string, id: string, timestampS: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), "base64");
  const signature = createHmac("sha256", key).update(`${id}.${timestampS}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": String(timestampS), "webhook-signature": `v1,${signature}` };
}

/** WebSub's `X-Hub-Signature` of `body` under the subscriber's secret. */
export const hubSignature = (secret: string, body: string): string => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;

/** Whether `given` is `secret`, in time that does not depend on where they differ. */
export function sameSecret(given: string, secret: string | null): boolean {
  if (secret === null) return false;
  const a = Buffer.from(given);
  const b = Buffer.from(secret);
  return a.length === b.length && timingSafeEqual(a, b);
}
