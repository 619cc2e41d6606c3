// Standard Webhooks signatures: `webhook-id` (the event id, the same on every attempt, so a
// receiver drops a repeat), `webhook-timestamp` (seconds, this attempt's), `webhook-signature`
// (`v1,` + base64 HMAC-SHA256 of `id.timestamp.body` under the secret), made by the
// `standardwebhooks` package receivers verify with.
import { Webhook } from "standardwebhooks";

export function signedHeaders(secret: string, msgId: string, body: string, now = new Date()): Record<string, string> {
  const at = new Date(Math.floor(now.getTime() / 1000) * 1000);
  return {
    "webhook-id": msgId,
    "webhook-timestamp": String(at.getTime() / 1000),
    "webhook-signature": new Webhook(secret).sign(msgId, at, body),
  };
}
