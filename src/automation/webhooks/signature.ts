// The delivery signature: `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`
// with the hook's secret, where timestamp is the X-Webhook-Timestamp header (Unix seconds of the
// attempt). Signing the timestamp lets a receiver refuse replays of old deliveries.
import { createHmac } from 'node:crypto';

export function signature(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
