// The outbound policy for requests the server sends on an administrator's behalf (cron http actions,
// webhooks): only http: and https:, no credentials in the URL, and no address that is not public
// (blocked-addresses.ts) unless the target is on the `outboundAllowList` setting.
//
// Checked twice, because a name can resolve differently later (DNS rebinding):
//   checkUrl()  at save time: the URL as written, and the addresses its name resolves to now.
//   request()   at connect time: every hop (redirects are followed by hand and each is checked before
//               it is sent), and every address a name resolves to, inside the socket's own `lookup`,
//               so the address checked is the address connected to. A refused target gets no connection.
// A redirect to another origin drops every credential header (the rule that masks them,
// model/secret-headers.ts), not only Authorization: what the administrator gave for one origin
// is never sent to another.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { compileHostPortRules, isHostName, targetOf, type HostPortMatcher, type HostPortTarget } from '../lib/host-port-rules.ts';
import { isSecretHeader } from '../model/secret-headers.ts';
import { blockedReason } from './blocked-addresses.ts';

/** The target is not allowed by the policy. */
export class OutboundRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefusedError';
  }
}

/** The request could not complete (connection refused, timeout, too many redirects). */
export class OutboundRequestError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OutboundRequestError';
  }
}

export interface OutboundRequest {
  url: string;
  method: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** The response body is kept up to this many bytes; the rest is not read. */
  maxBodyBytes: number;
  /** Redirects followed (default 5); 0 answers with the redirect itself, not followed. */
  maxRedirects?: number;
  /** Cancels the request (on shutdown); it then fails with OutboundRequestError "Cancelled". */
  signal?: AbortSignal;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
  /** The URL that answered (after redirects). */
  url: string;
}

const PROTOCOLS = new Set(['http:', 'https:']);
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DEFAULT_MAX_REDIRECTS = 5;
/** Save-time resolution is advisory (connect time decides): a slow resolver must not hold a save. */
const SAVE_LOOKUP_TIMEOUT_MS = 2000;

export class OutboundPolicy {
  readonly #allow: HostPortMatcher;

  /** Throws InvalidHostPortRuleError for a bad entry. */
  constructor(allowList: readonly string[]) {
    this.#allow = compileHostPortRules(allowList);
  }

  /** Save-time check. Throws OutboundRefusedError with a message fit for the client. */
  async checkUrl(raw: string): Promise<void> {
    const url = parseTarget(raw);
    const target = targetOf(url);
    if (this.#allow.matches(target)) return;
    this.#checkLiteral(url, target);
    if (isIP(bare(url.hostname)) !== 0) return;
    let addresses: LookupAddress[];
    try {
      addresses = await resolveWithin(url.hostname, SAVE_LOOKUP_TIMEOUT_MS);
    } catch {
      return; // unresolvable now: refused at connect time if it resolves to a blocked address then
    }
    this.#checkAddresses(url, target, addresses);
  }

  /** Sends the request under the policy, following up to maxRedirects redirects, each one checked. */
  async request(request: OutboundRequest): Promise<OutboundResponse> {
    const signal = request.signal ? AbortSignal.any([AbortSignal.timeout(request.timeoutMs), request.signal]) : AbortSignal.timeout(request.timeoutMs);
    let url = parseTarget(request.url);
    let method = request.method.toUpperCase();
    let body = request.body;
    const headers: Record<string, string> = Object.fromEntries(Object.entries(request.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
    const maxRedirects = request.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
    try {
      for (let hop = 0; ; hop++) {
        const response = await this.#send(url, method, headers, body, signal);
        const location = response.headers.location;
        if (!REDIRECTS.has(response.statusCode ?? 0) || !location || maxRedirects === 0) return await readResponse(response, url, request.maxBodyBytes);
        response.destroy();
        if (hop >= maxRedirects) throw new OutboundRequestError(`Stopped after ${maxRedirects} redirects`);
        const next = parseTarget(new URL(location, url).href);
        if (next.origin !== url.origin) for (const name of Object.keys(headers)) if (isSecretHeader(name)) delete headers[name];
        if (response.statusCode === 303 || ((response.statusCode === 301 || response.statusCode === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          delete headers['content-type'];
          delete headers['content-length'];
        }
        url = next;
      }
    } catch (error) {
      if (error instanceof OutboundRefusedError || error instanceof OutboundRequestError) throw error;
      if (request.signal?.aborted) throw new OutboundRequestError('Cancelled');
      if (signal.aborted) throw new OutboundRequestError(`Timed out after ${request.timeoutMs} ms`);
      throw new OutboundRequestError(`Request failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  #send(url: URL, method: string, headers: Record<string, string>, body: string | undefined, signal: AbortSignal): Promise<IncomingMessage> {
    const target = targetOf(url);
    const allowed = this.#allow.matches(target);
    if (!allowed) this.#checkLiteral(url, target);
    const lookup: LookupFunction = (hostname, options, callback) => {
      dnsLookup(hostname, { all: true, family: options.family ?? 0, ...(options.hints ? { hints: options.hints } : {}) }, (error, addresses) => {
        if (error) return callback(error, '', 0);
        try {
          if (!allowed) this.#checkAddresses(url, target, addresses);
        } catch (refusal) {
          return callback(refusal as Error, '', 0);
        }
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0] as LookupAddress;
        callback(null, first.address, first.family);
      });
    };
    const options: RequestOptions = { method, headers: { ...headers }, lookup, signal, agent: false };
    if (body !== undefined) (options.headers as Record<string, string>)['content-length'] = String(Buffer.byteLength(body));
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const outgoing = send(url, options, resolve);
      outgoing.once('error', reject);
      outgoing.end(body);
    });
  }

  /** An IP literal (in any spelling the URL parser accepts) or a `localhost` name, before any lookup. */
  #checkLiteral(url: URL, target: HostPortTarget): void {
    const host = bare(url.hostname);
    if (isIP(host) !== 0) {
      const reason = blockedReason(host);
      if (reason) throw refused(url, target, `${host} is ${reason}`);
      return;
    }
    const name = host.replace(/\.+$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) throw refused(url, target, `${host} is a loopback name`);
  }

  #checkAddresses(url: URL, target: HostPortTarget, addresses: readonly LookupAddress[]): void {
    for (const { address } of addresses) {
      const reason = blockedReason(address);
      if (!reason) continue;
      const hostname = address.includes(':') ? `[${address}]` : address;
      if (this.#allow.matches({ ...target, hostname })) continue;
      throw refused(url, target, `${url.hostname} resolves to ${address}, ${reason}`);
    }
  }
}

/** Parses and checks the parts of a URL that need no lookup. */
function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundRefusedError('The URL is not a valid absolute URL');
  }
  if (!PROTOCOLS.has(url.protocol)) throw new OutboundRefusedError(`Only http: and https: URLs are allowed, not ${url.protocol}`);
  // `http://user@127.0.0.1@evil/` reads differently to different parsers: credentials go in headers.
  if (url.username || url.password) throw new OutboundRefusedError('The URL must not contain user info (send credentials in a header)');
  if (!url.hostname) throw new OutboundRefusedError('The URL has no host');
  if (!isHostName(url.hostname)) throw new OutboundRefusedError(`The URL's host "${url.hostname}" is not a host name or an IP address`);
  return url;
}

function refused(url: URL, target: HostPortTarget, why: string): OutboundRefusedError {
  return new OutboundRefusedError(`${url.origin} is refused: ${why} (add "${target.hostname}:${target.port}" to outboundAllowList to allow it)`);
}

function bare(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

function resolveWithin(hostname: string, ms: number): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('lookup timed out')), ms);
    dnsLookup(hostname, { all: true }, (error, addresses) => {
      clearTimeout(timer);
      if (error) reject(error);
      else resolve(addresses);
    });
  });
}

async function readResponse(response: IncomingMessage, url: URL, maxBytes: number): Promise<OutboundResponse> {
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    const room = maxBytes - size;
    if (chunk.length > room) {
      chunks.push(chunk.subarray(0, room));
      truncated = true;
      break;
    }
    chunks.push(chunk);
    size += chunk.length;
  }
  response.destroy();
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  return { status: response.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8'), truncated, url: url.href };
}

const policies = new WeakMap<readonly string[], OutboundPolicy>();

/** The policy for an allow list, compiled once per list object (settings hand out one per revision). */
export function outboundPolicyFor(allowList: readonly string[]): OutboundPolicy {
  let policy = policies.get(allowList);
  if (!policy) {
    policy = new OutboundPolicy(allowList);
    policies.set(allowList, policy);
  }
  return policy;
}
