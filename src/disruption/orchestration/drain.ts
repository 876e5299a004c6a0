import type { V1Pod } from '@kubernetes/client-node';
import type { Clock } from '../../provisioning/clock.js';
import { occupiesNode } from '../validation.js';
import type { DisruptionNodePort, FreshNode, PodRef } from './node-port.js';

/**
 * Drains a tainted node through the Eviction API before its Machine is removed
 * (docs/adr/0082-eviction-and-capi-drain.md): every pod that would have to move is
 * evicted, so the API server enforces PodDisruptionBudgets and the kubelet honours
 * each pod's terminationGracePeriodSeconds; a refusal (429: a PDB allows no
 * disruption now) is retried with exponential back-off (its Retry-After when given).
 * The drain ends when no such pod is left, and is given up, with the node kept, when
 * the deadline passes, the loop stops, `cancel` says pending pods need the node, or
 * `invalid` finds on a read what the decision did not plan for (a pod bound after it:
 * kube-scheduler may bind to the node for a while before it sees the taint, and the
 * drain must not evict a pod the decision never found a place for).
 */

export interface DrainOptions {
  /** Give up (and keep the node) when pods are still on it after this long. */
  timeoutMs: number;
  /** How often the node is read again (and `cancel` asked). */
  pollMs: number;
  /** First back-off after a refused eviction; doubles per refusal of the same pod, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** False once the loop is stopping (or leadership is lost). */
  mayAct: () => boolean;
  /** Why the node must be kept after all (pending pods need it), or undefined. Asked once per poll. */
  cancel?: () => Promise<string | undefined>;
  /**
   * Why the node must be kept on this fresh read (pods terminating already left out), or
   * undefined. Asked on every read, before any eviction.
   */
  invalid?: (fresh: FreshNode) => string | undefined;
}

export const DEFAULT_DRAIN: Omit<DrainOptions, 'mayAct' | 'cancel'> = { timeoutMs: 600_000, pollMs: 1000, backoffMs: 1000, maxBackoffMs: 30_000 };

export type DrainOutcome =
  | { drained: true; evicted: number; refusals: number }
  | { drained: false; why: string; evicted: number; refusals: number };

function refOf(p: V1Pod): PodRef {
  return { namespace: p.metadata?.namespace ?? '', name: p.metadata?.name ?? '', uid: p.metadata?.uid ?? '' };
}

/** The node with only the pods that are not already leaving it. */
export function withoutTerminating(fresh: FreshNode): FreshNode {
  return fresh.pods.some((p) => p.metadata?.deletionTimestamp) ? { ...fresh, pods: fresh.pods.filter((p) => !p.metadata?.deletionTimestamp) } : fresh;
}

const sleep = (clock: Clock, ms: number) => new Promise<void>((resolve) => clock.setTimer(ms, resolve));

/** Evicts the pods of `node` that have to move and waits until they are gone. Needs `nodes.evictPod`. */
export async function drainNode(node: string, nodes: DisruptionNodePort, clock: Clock, opts: DrainOptions): Promise<DrainOutcome> {
  if (!nodes.evictPod) throw new Error('this node port cannot evict pods');
  const evict = nodes.evictPod.bind(nodes);
  const started = clock.now();
  /** uid -> earliest next attempt, and refusals so far; pods evicted (or found gone) are in `done`. */
  const retry = new Map<string, { at: number; refusals: number }>();
  const done = new Set<string>();
  /** Pods the API server says are gone (a dry run says so too): not waited for. */
  const gone = new Set<string>();
  let evicted = 0;
  let refusals = 0;
  const out = (why?: string): DrainOutcome => (why === undefined ? { drained: true, evicted, refusals } : { drained: false, why, evicted, refusals });
  for (;;) {
    if (!opts.mayAct()) return out('disruption stopped during the drain');
    const fresh = await nodes.readNode(node);
    if (!fresh) return out();
    const invalid = opts.invalid?.(withoutTerminating(fresh));
    if (invalid) return out(invalid);
    const movable = fresh.pods.filter((p) => occupiesNode(p) && !gone.has(p.metadata?.uid ?? ''));
    if (movable.length === 0) return out();
    const waiting = movable.length;
    const left = movable.filter((p) => !done.has(p.metadata?.uid ?? ''));
    const now = clock.now();
    if (now - started >= opts.timeoutMs) return out(`drain did not finish in ${Math.round(opts.timeoutMs / 1000)} s: ${waiting} pod(s) still on the node`);
    const why = await opts.cancel?.();
    if (why) return out(why);
    for (const p of left) {
      const uid = p.metadata?.uid ?? '';
      // Already terminating (evicted by us, or deleted by someone else): wait for it, within its grace period.
      if (p.metadata?.deletionTimestamp) continue;
      const r = retry.get(uid);
      if (r && r.at > now) continue;
      if (!opts.mayAct()) return out('disruption stopped during the drain');
      const res = await evict(refOf(p));
      if (res.kind === 'refused') {
        refusals++;
        const n = (r?.refusals ?? 0) + 1;
        const backoff = res.retryAfterMs ?? Math.min(opts.maxBackoffMs, opts.backoffMs * 2 ** (n - 1));
        retry.set(uid, { at: now + backoff, refusals: n });
      } else {
        if (res.kind === 'evicted') evicted++;
        else gone.add(uid);
        done.add(uid);
        retry.delete(uid);
      }
    }
    await sleep(clock, opts.pollMs);
  }
}
