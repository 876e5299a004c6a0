import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';

/** A serving certificate, its key and (optionally) the CA that signed it, all PEM. */
export interface TlsMaterial {
  certPem: string;
  keyPem: string;
  caPem?: string;
}

/** File names in a kubernetes.io/tls Secret as cert-manager writes it. */
export const TLS_CERT_FILE = 'tls.crt';
export const TLS_KEY_FILE = 'tls.key';
export const CA_CERT_FILE = 'ca.crt';

/** Reads tls.crt / tls.key / ca.crt (optional) from a mounted secret directory. */
export async function readTlsDir(dir: string): Promise<TlsMaterial> {
  const [certPem, keyPem, caPem] = await Promise.all([
    readFile(join(dir, TLS_CERT_FILE), 'utf8'),
    readFile(join(dir, TLS_KEY_FILE), 'utf8'),
    readFile(join(dir, CA_CERT_FILE), 'utf8').catch(() => undefined),
  ]);
  return caPem === undefined ? { certPem, keyPem } : { certPem, keyPem, caPem };
}

/** Throws when the key does not match the certificate or either fails to parse. */
export function validateTlsMaterial(m: TlsMaterial): void {
  createSecureContext({ cert: m.certPem, key: m.keyPem });
}

export interface WatchOptions {
  /** Poll period: the safety net when file events are missed (e.g. some volume types). */
  pollMs?: number;
  /** Quiet period after a file event before reading, so a rotation in progress settles. */
  debounceMs?: number;
  onError?: (message: string) => void;
}

/**
 * Watches a mounted TLS secret and calls `onChange` with new, valid material. The
 * kubelet swaps the whole directory at once (atomic `..data` symlink); cert-manager may
 * write files one by one, so a half-written pair (key not matching cert) is skipped and
 * retried on the next event or poll. Returns a stop function.
 */
export function watchTlsDir(
  dir: string,
  current: TlsMaterial,
  onChange: (m: TlsMaterial) => void,
  opts: WatchOptions = {},
): () => void {
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
      const next = await readTlsDir(dir);
      if (next.certPem === last.certPem && next.keyPem === last.keyPem && next.caPem === last.caPem) return;
      validateTlsMaterial(next);
      last = next;
      if (!stopped) onChange(next);
    } catch (err) {
      onError(`TLS reload from ${dir} skipped: ${(err as Error).message.split('\n')[0]}`);
    } finally {
      checking = false;
    }
  };

  const poll = setInterval(() => void check(), pollMs);
  poll.unref();
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, () => {
      clearTimeout(debounce);
      debounce = setTimeout(() => void check(), debounceMs);
      debounce.unref();
    });
    watcher.on('error', () => undefined);
  } catch {
    // No inotify (or too many watches): polling alone still picks up rotations.
  }
  return () => {
    stopped = true;
    clearInterval(poll);
    clearTimeout(debounce);
    watcher?.close();
  };
}
