import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

/**
 * Deepest nesting of arrays and objects accepted in a request body. Kubernetes objects
 * stay far below it (a Pod with affinity terms is about 12 deep, wrapped in an
 * AdmissionReview 14); the bound keeps JSON.stringify and every recursive reader of the
 * parsed value clear of the stack limit, whatever the caller sent.
 */
export const MAX_JSON_DEPTH = 100;

/**
 * After refusing a body (413), how much of it is still read and thrown away so that a
 * client that is still writing gets to read the status instead of a reset (a "lingering
 * close"). Past this the connection is dropped.
 */
export const LINGER_BYTES = 32 * 1024 * 1024;

export interface BodyLimits {
  /** Largest body accepted, in bytes. */
  maxBytes: number;
  maxDepth?: number;
  lingerBytes?: number;
}

/**
 * How a refusal is to be delivered: `close` when the rest of the body will not be read
 * (the connection cannot carry another request), else the body is being drained.
 */
export interface BodyRefusal {
  error: HttpError;
  close: boolean;
}

/**
 * Reads a JSON request body within the limits and parses it. `done` is called once with
 * the parsed value or a refusal: 413 past `maxBytes` (checked early from content-length,
 * then while streaming; the rest of the body is drained up to `lingerBytes`), 400 for an
 * empty body, nesting deeper than `maxDepth`, malformed JSON or a body that could not be
 * read. Never throws.
 */
export function readJsonBody(req: IncomingMessage, limits: BodyLimits, done: (refusal: BodyRefusal | undefined, value?: unknown) => void): void {
  const { maxBytes } = limits;
  const maxDepth = limits.maxDepth ?? MAX_JSON_DEPTH;
  const lingerBytes = limits.lingerBytes ?? LINGER_BYTES;
  const tooLarge = () => new HttpError(413, `request body exceeds ${maxBytes} bytes`);
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) {
    // Too much to linger over: answer, and let the connection close after the reply.
    const close = declared > maxBytes + lingerBytes;
    if (close) req.resume();
    else drain(req, maxBytes + lingerBytes);
    return done({ error: tooLarge(), close });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  const finish = (refusal: BodyRefusal | undefined, value?: unknown) => {
    if (finished) return;
    finished = true;
    done(refusal, value);
  };
  const onData = (chunk: Buffer) => {
    size += chunk.length;
    if (size <= maxBytes) {
      chunks.push(chunk);
      return;
    }
    chunks.length = 0;
    req.off('data', onData);
    req.off('end', onEnd);
    drain(req, maxBytes + lingerBytes, size);
    finish({ error: tooLarge(), close: false });
  };
  const onEnd = () => {
    try {
      finish(undefined, parseJsonBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), maxDepth));
    } catch (err) {
      finish({ error: err instanceof HttpError ? err : new HttpError(400, 'request body could not be parsed'), close: false });
    }
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', () => finish({ error: new HttpError(400, 'request body could not be read'), close: true }));
}

/** Parses a JSON body, refusing (400, one line) empty input, nesting deeper than `maxDepth` and malformed JSON. */
export function parseJsonBody(body: Buffer, maxDepth = MAX_JSON_DEPTH): unknown {
  if (body.length === 0) throw new HttpError(400, 'request body is required');
  if (jsonDepthExceeds(body, maxDepth)) throw new HttpError(400, `JSON nested deeper than ${maxDepth} levels`);
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new HttpError(400, `malformed JSON: ${(err as Error).message.split('\n')[0]!.slice(0, 200)}`);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * True when arrays/objects in the (UTF-8) JSON text nest deeper than `max`. One pass over
 * the bytes, jumping over strings; multi-byte UTF-8 sequences never contain these ASCII
 * bytes. Malformed text is left to JSON.parse to refuse.
 */
export function jsonDepthExceeds(text: Buffer, max: number): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i];
    if (c === QUOTE) {
      // Find the closing quote: one not preceded by an odd run of backslashes.
      for (;;) {
        const q = text.indexOf(QUOTE, i + 1);
        if (q < 0) return false;
        let backslashes = 0;
        for (let j = q - 1; text[j] === BACKSLASH; j--) backslashes++;
        i = q;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * Reads and discards the rest of a refused body; past `bound` bytes in all, drops the
 * connection (the client gets a reset, but only after sending that much). The response
 * stays keep-alive: once the body has been read the connection is in step again.
 */
function drain(req: IncomingMessage, bound: number, alreadyRead = 0): void {
  let read = alreadyRead;
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > bound) req.socket.destroy();
  });
  req.resume();
}
