import { X509Certificate } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { createSecureContext, type SecureContextOptions } from 'node:tls';

/**
 * A serving certificate, its key and (optionally) the CA that signed it, all PEM.
 * `clientCaPem` turns on mutual TLS: only clients presenting a certificate that chains
 * to one of these CAs complete the handshake.
 */
export interface TlsMaterial {
  certPem: string;
  keyPem: string;
  caPem?: string;
  clientCaPem?: string;
}

/** Where TLS material is read from: a mounted Secret, plus an optional client CA bundle file. */
export interface TlsSource {
  dir: string;
  /** PEM bundle of the CAs that sign kube-apiserver's and kube-scheduler's client certificates. */
  clientCaFile?: string;
}

/** File names in a kubernetes.io/tls Secret as cert-manager writes it. */
export const TLS_CERT_FILE = 'tls.crt';
export const TLS_KEY_FILE = 'tls.key';
export const CA_CERT_FILE = 'ca.crt';

/** TLS 1.2 is the floor for every listener (the webhook, the extender). */
export const MIN_TLS_VERSION = 'TLSv1.2';

/** Reads tls.crt / tls.key / ca.crt (optional) from a mounted secret directory, and the client CA file. */
export async function readTlsDir(dir: string, clientCaFile?: string): Promise<TlsMaterial> {
  const [certPem, keyPem, caPem, clientCaPem] = await Promise.all([
    readFile(join(dir, TLS_CERT_FILE), 'utf8'),
    readFile(join(dir, TLS_KEY_FILE), 'utf8'),
    readFile(join(dir, CA_CERT_FILE), 'utf8').catch(() => undefined),
    clientCaFile === undefined ? undefined : readFile(clientCaFile, 'utf8'),
  ]);
  return {
    certPem,
    keyPem,
    ...(caPem === undefined ? {} : { caPem }),
    ...(clientCaPem === undefined ? {} : { clientCaPem }),
  };
}

/** The secure-context options for `m` (what `setSecureContext` swaps on rotation). */
export function secureContextOptions(m: TlsMaterial): SecureContextOptions {
  return { cert: m.certPem, key: m.keyPem, minVersion: MIN_TLS_VERSION, ...(m.clientCaPem ? { ca: m.clientCaPem } : {}) };
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** Throws unless `pem` holds at least one certificate and every certificate in it parses. */
export function validateCaBundle(pem: string, what = 'client CA bundle'): void {
  const blocks = pem.match(PEM_CERTIFICATE) ?? [];
  if (blocks.length === 0) throw new Error(`${what} holds no PEM certificate`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (err) {
      throw new Error(`${what} has a certificate that does not parse: ${(err as Error).message}`);
    }
  }
}

/** Throws when the key does not match the certificate, either fails to parse, or the client CA bundle is unusable. */
export function validateTlsMaterial(m: TlsMaterial): void {
  if (m.clientCaPem !== undefined) validateCaBundle(m.clientCaPem);
  createSecureContext(secureContextOptions(m));
}

const sameMaterial = (a: TlsMaterial, b: TlsMaterial) =>
  a.certPem === b.certPem && a.keyPem === b.keyPem && a.caPem === b.caPem && a.clientCaPem === b.clientCaPem;

export interface WatchOptions {
  /** Poll period: the safety net when file events are missed (e.g. some volume types). */
  pollMs?: number;
  /** Quiet period after a file event before reading, so a rotation in progress settles. */
  debounceMs?: number;
  onError?: (message: string) => void;
}

/**
 * Watches a mounted TLS secret (and the client CA file, when mutual TLS is on) and calls
 * `onChange` with new, valid material. The kubelet swaps a whole volume at once (atomic
 * `..data` symlink); cert-manager may write files one by one, so a half-written pair (key
 * not matching cert) or a torn CA bundle is skipped and retried on the next event or poll.
 * Returns a stop function.
 */
export function watchTlsDir(
  source: string | TlsSource,
  current: TlsMaterial,
  onChange: (m: TlsMaterial) => void,
  opts: WatchOptions = {},
): () => void {
  const { dir, clientCaFile } = typeof source === 'string' ? { dir: source, clientCaFile: undefined } : source;
  const pollMs = opts.pollMs ?? 10_000;
  const debounceMs = opts.debounceMs ?? 250;
  const onError = opts.onError ?? ((m: string) => console.error(m));
  let last = current;
  let stopped = false;
  let checking = false;
  let debounce: NodeJS.Timeout | undefined;

  const check = async () => {
    if (stopped || checking) return;
    checking = true;
    try {
      const next = await readTlsDir(dir, clientCaFile);
      if (sameMaterial(next, last)) return;
      validateTlsMaterial(next);
      last = next;
      if (!stopped) onChange(next);
    } catch (err) {
      onError(`TLS reload from ${dir}${clientCaFile ? ` and ${clientCaFile}` : ''} skipped: ${(err as Error).message.split('\n')[0]}`);
    } finally {
      checking = false;
    }
  };

  const poll = setInterval(() => void check(), pollMs);
  poll.unref();
  const watchers: FSWatcher[] = [];
  const dirs = new Set([resolve(dir), ...(clientCaFile ? [resolve(dirname(clientCaFile))] : [])]);
  for (const d of dirs) {
    try {
      const watcher = watch(d, () => {
        clearTimeout(debounce);
        debounce = setTimeout(() => void check(), debounceMs);
        debounce.unref();
      });
      watcher.on('error', () => undefined);
      watchers.push(watcher);
    } catch {
      // No inotify (or too many watches): polling alone still picks up rotations.
    }
  }
  return () => {
    stopped = true;
    clearInterval(poll);
    clearTimeout(debounce);
    for (const w of watchers) w.close();
  };
}
