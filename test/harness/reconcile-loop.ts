import type { KubeConfig, V1Node } from '@kubernetes/client-node';
import { deleteNode, listNodes } from './kwok-nodes.js';

/**
 * The loop of the test stand-ins for Cluster API and its cloud (machine-fixture.ts,
 * kwok-provider.ts), which turn objects into kwok Nodes: a level-triggered `reconcile()`
 * pass every `intervalMs`, passes serialized with each other and with
 * `reconcileOnce()` calls from tests, each distinct error printed once (a failing pass
 * must neither flood the test output nor stop the loop). `stop()` removes the Nodes
 * the stand-in made, so later tests on a shared control plane do not see them.
 */
export abstract class ReconcileLoop {
  /** The last error a pass hit. */
  lastError: Error | undefined;
  private readonly reported = new Set<string>();
  private loop: Promise<void> | undefined;
  private stopping = false;
  private busy: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;

  protected constructor(
    protected readonly kc: KubeConfig,
    private readonly name: string,
    private readonly intervalMs: number,
  ) {}

  /** One pass over everything in scope. */
  protected abstract reconcile(): Promise<void>;

  /** The label selector of the Nodes this stand-in made. */
  protected abstract nodeSelector(): string;

  /** One full pass, serialized with the loop. For deterministic tests. */
  reconcileOnce(): Promise<void> {
    const next = this.busy.then(() => this.reconcile());
    this.busy = next.catch(() => undefined);
    return next;
  }

  /** Stops the loop; unless `keepNodes`, deletes the Nodes this stand-in made. */
  async stop(opts: { keepNodes?: boolean } = {}): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    await this.loop;
    await this.busy;
    if (opts.keepNodes) return;
    const nodes = await this.listNodes();
    await Promise.all(nodes.map((n) => deleteNode(this.kc, n.metadata!.name!)));
  }

  /** Runs a first pass (its error is thrown), then starts the loop. */
  protected async startLoop(): Promise<void> {
    await this.reconcileOnce();
    this.loop = this.run();
  }

  /** Records an error; prints it the first time its message is seen. */
  protected report(err: unknown): void {
    const e = err instanceof Error ? err : new Error(String(err));
    this.lastError = e;
    if (!this.reported.has(e.message)) {
      this.reported.add(e.message);
      console.error(`[${this.name}] ${e.message}`);
    }
  }

  protected listNodes(): Promise<V1Node[]> {
    return listNodes(this.kc, this.nodeSelector());
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        this.timer = setTimeout(resolve, this.intervalMs);
      });
      if (this.stopping) break;
      await this.reconcileOnce().catch((err: unknown) => this.report(err));
    }
  }
}
