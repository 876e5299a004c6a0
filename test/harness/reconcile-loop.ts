import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { type CollectionWatch, watchCollection } from './kube-watch.js';
import { deleteNode, listNodes } from './kwok-nodes.js';

/**
 * The loop of the test stand-ins for Cluster API and its cloud (machine-fixture.ts,
 * kwok-provider.ts), which turn objects into kwok Nodes. `reconcile()` is a
 * level-triggered pass over everything in scope (fresh LISTs, so a pass never acts on
 * a stale cache); what changed is when passes run:
 *  - a watch on each collection the pass reads (watchedCollections()) triggers a pass
 *    shortly after any change (EVENT_DELAY_MS, which also coalesces a burst, such as
 *    the echoes of the previous pass's own writes);
 *  - a pass with time-based work left (a boot delay running, a drain waiting for its
 *    pods, a failed step) calls pollAgain(): the next pass comes `intervalMs` later,
 *    exactly as the old fixed timer did;
 *  - otherwise a slow resync (RESYNC_MS) is the safety net.
 * An idle stand-in so costs the apiserver a few idle watches instead of five to nine
 * LISTs every 100-200 ms (most of the integration suite's kube-apiserver and etcd CPU).
 *
 * Passes are serialized with each other and with `reconcileOnce()` calls from tests;
 * each distinct error is printed once (a failing pass must neither flood the test
 * output nor stop the loop). `stop()` removes the Nodes the stand-in made, so later
 * tests on a shared control plane do not see them.
 */
const RESYNC_MS = 3000;
/** At most this many objects are reconciled at once within a pass. */
export const PASS_CONCURRENCY = 16;

export abstract class ReconcileLoop {
  /** The last error a pass hit. */
  lastError: Error | undefined;
  /** Passes run so far (for measurements). */
  passes = 0;
  private readonly reported = new Set<string>();
  private loop: Promise<void> | undefined;
  private stopping = false;
  private busy: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private wakeAt = 0;
  /** A watched collection changed since the last pass started. */
  private dirty = true;
  /** The last pass asked for another one after intervalMs. */
  private pollSoon = false;
  private watches: CollectionWatch[] = [];
  private readonly eventDelayMs: number;

  protected constructor(
    protected readonly kc: KubeConfig,
    private readonly name: string,
    private readonly intervalMs: number,
  ) {
    this.eventDelayMs = Math.min(50, intervalMs);
  }

  /** One pass over everything in scope. */
  protected abstract reconcile(): Promise<void>;

  /** The label selector of the Nodes this stand-in made. */
  protected abstract nodeSelector(): string;

  /** API paths of the collections reconcile() reads: a change in any triggers a pass. */
  protected abstract watchedCollections(): string[];

  /** One full pass, serialized with the loop. For deterministic tests. */
  reconcileOnce(): Promise<void> {
    const next = this.busy.then(() => {
      this.dirty = false;
      this.pollSoon = false;
      this.passes++;
      return this.reconcile();
    });
    this.busy = next.catch(() => undefined);
    return next;
  }

  /** Stops the loop; unless `keepNodes`, deletes the Nodes this stand-in made. */
  async stop(opts: { keepNodes?: boolean } = {}): Promise<void> {
    this.stopping = true;
    for (const w of this.watches) w.stop();
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    await this.busy;
    if (opts.keepNodes) return;
    const nodes = await this.listNodes();
    await Promise.all(nodes.map((n) => deleteNode(this.kc, n.metadata!.name!)));
  }

  /** Starts the watches, runs a first pass (its error is thrown), then starts the loop. */
  protected async startLoop(): Promise<void> {
    this.watches = this.watchedCollections().map((path) => watchCollection(this.kc, path, () => this.changed()));
    try {
      await this.reconcileOnce();
    } catch (err) {
      for (const w of this.watches) w.stop();
      throw err;
    }
    this.loop = this.run();
  }

  /** Time-based work is left (a boot delay, a drain): pass again after intervalMs. */
  protected pollAgain(): void {
    this.pollSoon = true;
  }

  /** Something outside the watched objects changed (a test's instruction): pass soon. */
  protected changed(): void {
    this.dirty = true;
    if (this.wake && this.wakeAt > Date.now() + this.eventDelayMs) this.sleep(this.eventDelayMs);
  }

  /** Records an error (the pass is retried after intervalMs); prints it the first time its message is seen. */
  protected report(err: unknown): void {
    this.pollSoon = true;
    const e = err instanceof Error ? err : new Error(String(err));
    this.lastError = e;
    if (!this.reported.has(e.message)) {
      this.reported.add(e.message);
      console.error(`[${this.name}] ${e.message}`);
    }
  }

  /** Runs `steps`, at most PASS_CONCURRENCY at once; each failure is reported, none stops the others. */
  protected async runSteps(steps: ReadonlyArray<() => Promise<void>>): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < steps.length) {
        const step = steps[next++]!;
        await step().catch((err: unknown) => this.report(err));
      }
    };
    await Promise.all(Array.from({ length: Math.min(PASS_CONCURRENCY, steps.length) }, worker));
  }

  protected listNodes(): Promise<V1Node[]> {
    return listNodes(this.kc, this.nodeSelector());
  }

  private sleep(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.wakeAt = Date.now() + ms;
    this.timer = setTimeout(() => this.wake?.(), ms);
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.sleep(this.dirty ? this.eventDelayMs : this.pollSoon ? this.intervalMs : RESYNC_MS);
      });
      this.wake = undefined;
      if (this.stopping) break;
      await this.reconcileOnce().catch((err: unknown) => this.report(err));
    }
  }
}
