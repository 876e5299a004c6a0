/**
 * Creating many objects fast, for the scale benchmark: `concurrency` requests in flight
 * at once (a new one as soon as any finishes), over one keep-alive connection pool
 * (KubeClient's), instead of batches that each wait for their slowest member over
 * client-node's API classes, which open a new connection and TLS handshake per call.
 * kube-apiserver and etcd then set the rate, not the round-trips. A 429 is retried by
 * KubeClient after its Retry-After; any other error fails the run (a benchmark on a
 * partial cluster would measure something else).
 */
export interface CreateManyOptions {
  /** Requests in flight at once (KubeClient pools 32 connections). */
  concurrency: number;
  /** Called every `every` creations with how many are done (progress lines). */
  onProgress?: (done: number) => void;
  every?: number;
}

/** Calls `create` on every item, `concurrency` at a time; resolves with the seconds it took. */
export async function createMany<T>(items: readonly T[], create: (item: T) => Promise<unknown>, opts: CreateManyOptions): Promise<number> {
  const started = Date.now();
  let next = 0;
  let done = 0;
  const every = opts.every ?? 5000;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      await create(items[next++]!);
      if (++done % every === 0) opts.onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(opts.concurrency, items.length)) }, worker));
  return (Date.now() - started) / 1000;
}
