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
 * Most values (array elements and object members, counted by their separators) accepted
 * in one body. A Pod has hundreds, 5,000 node names 5,000, a NodeList of a few hundred
 * Nodes under 100,000. The bound caps the objects JSON.parse and the handlers allocate
 * for one request (a 4 MiB body of `{},` would be 1.4 million objects), which is what
 * sizes the process's heap.
 */
export const MAX_JSON_VALUES = 100_000;

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
  maxValues?: number;
  lingerBytes?: number;
}

/**
 * A refused body. A body read to its end (400s) leaves the connection usable. Otherwise
 * the reply closes it: at once (`close`), or, when `drained` is set, once the rest of the
 * body has been read and thrown away (`drained` calls back then), so that no unread data
 * is left when the socket closes (which would make the kernel send a reset before the
 * client has read the status).
 */
export interface BodyRefusal {
  error: HttpError;
  close?: true;
  drained?: (then: () => void) => void;
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
  const bounds = { depth: limits.maxDepth ?? MAX_JSON_DEPTH, values: limits.maxValues ?? MAX_JSON_VALUES };
  const lingerBytes = limits.lingerBytes ?? LINGER_BYTES;
  const tooLarge = () => new HttpError(413, `request body exceeds ${maxBytes} bytes`);
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) {
    // Too much to linger over: answer, and let the connection close after the reply.
    if (declared > maxBytes + lingerBytes) {
      req.resume();
      return done({ error: tooLarge(), close: true });
    }
    return done({ error: tooLarge(), drained: drain(req, maxBytes + lingerBytes) });
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
    finish({ error: tooLarge(), drained: drain(req, maxBytes + lingerBytes, size) });
  };
  const onEnd = () => {
    try {
      finish(undefined, parseJsonBody(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), bounds));
    } catch (err) {
      finish({ error: err instanceof HttpError ? err : new HttpError(400, 'request body could not be parsed') });
    }
  };
  req.on('data', onData);
  req.on('end', onEnd);
  req.on('error', () => finish({ error: new HttpError(400, 'request body could not be read'), close: true }));
}

/**
 * Parses a JSON body, refusing (400, one line) empty input, nesting deeper than
 * `bounds.depth`, more than `bounds.values` values, and malformed JSON.
 */
export function parseJsonBody(body: Buffer, bounds: { depth: number; values: number } = { depth: MAX_JSON_DEPTH, values: MAX_JSON_VALUES }): unknown {
  if (body.length === 0) throw new HttpError(400, 'request body is required');
  const excess = scanJson(body, bounds.depth, bounds.values);
  if (excess === 'depth') throw new HttpError(400, `JSON nested deeper than ${bounds.depth} levels`);
  if (excess === 'values') throw new HttpError(400, `JSON with more than ${bounds.values} values`);
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
const COMMA = 0x2c;

/**
 * How far a string's closing quote is looked for byte by byte before handing over to
 * Buffer.indexOf: most strings in a request (node names, keys, label values) are short,
 * and for them a native call per string costs more than the bytes it skips.
 */
const SHORT_STRING_BYTES = 64;

/**
 * Which bound the (UTF-8) JSON text passes, if any: arrays/objects nested deeper than
 * `maxDepth`, or more than `maxValues` separators and containers. One pass over the
 * bytes, jumping over strings; multi-byte UTF-8 sequences never contain these ASCII
 * bytes. Malformed text is left to JSON.parse to refuse.
 */
export function scanJson(text: Buffer, maxDepth: number, maxValues: number): 'depth' | 'values' | undefined {
  let depth = 0;
  let values = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i];
    if (c === QUOTE) {
      i = closingQuote(text, i + 1);
      if (i < 0) return undefined;
    } else if (c === COMMA) {
      if (++values > maxValues) return 'values';
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > maxDepth) return 'depth';
      if (++values > maxValues) return 'values';
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return undefined;
}

/** Index of the quote closing the string whose text starts at `from`, or -1 when it is not closed. */
function closingQuote(text: Buffer, from: number): number {
  const n = text.length;
  const shortEnd = Math.min(n, from + SHORT_STRING_BYTES);
  let j = from;
  while (j < shortEnd) {
    const c = text[j];
    if (c === QUOTE) return j;
    // An escape takes the next byte with it, whatever it is (\" does not close).
    j += c === BACKSLASH ? 2 : 1;
  }
  // A long string: search natively for a quote not preceded by an odd run of backslashes.
  for (;;) {
    const q = text.indexOf(QUOTE, j);
    if (q < 0) return -1;
    let backslashes = 0;
    for (let k = q - 1; k >= from && text[k] === BACKSLASH; k--) backslashes++;
    if (backslashes % 2 === 0) return q;
    j = q + 1;
  }
}

/**
 * Reads and discards the rest of a refused body. Returns the hook that runs its callback
 * once the body has ended; past `bound` bytes in all the connection is dropped instead
 * (the client gets a reset, but only after sending that much).
 */
function drain(req: IncomingMessage, bound: number, alreadyRead = 0): (then: () => void) => void {
  let read = alreadyRead;
  let ended = req.complete;
  const waiting: (() => void)[] = [];
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > bound) req.socket.destroy();
  });
  req.on('end', () => {
    ended = true;
    for (const then of waiting.splice(0)) then();
  });
  req.resume();
  return (then) => {
    if (ended) then();
    else waiting.push(then);
  };
}
