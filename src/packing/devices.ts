import type { V1NodeSelector } from '@kubernetes/client-node';
import type { DraTable, PodDevices } from '../scheduling/dra/pod-devices.js';
import { nodeSelectorTermsMatch } from '../scheduling/node-affinity.js';
import type { Resources } from '../scheduling/resources.js';

/**
 * DRA devices in the packer. A node's free devices are resources per atom
 * (the set of signatures a device satisfies); a pod needs a count per signature. Which
 * atoms serve a signature is a choice: it is made greedily, the most constrained
 * signature first, each from its most specific atoms first, and always on real counts,
 * so a placement never takes a device twice. Shared claims take their devices once
 * per node; once placed, every other pod of the claim may only join that node.
 */

const EMPTY_TABLE: DraTable = { atomsOf: {}, describe: {} };

type Need = Array<[string, number]>;

/** Takes (or, with `apply` false, only checks) `need` from `free`; true when all of it fits. */
function assign(need: Need, free: Resources, table: DraTable, apply: boolean): boolean {
  const scratch: Resources = apply ? free : {};
  const get = (k: string) => (k in scratch ? scratch[k]! : free[k] ?? 0);
  const order = need.slice().sort((a, b) => (table.atomsOf[a[0]]?.length ?? 0) - (table.atomsOf[b[0]]?.length ?? 0));
  for (const [sig, count] of order) {
    let left = count;
    for (const atom of table.atomsOf[sig] ?? []) {
      const have = get(atom);
      if (have <= 0) continue;
      const take = have < left ? have : left;
      scratch[atom] = have - take;
      left -= take;
      if (left === 0) break;
    }
    if (left > 0) return false;
  }
  return true;
}

function needFor(dra: PodDevices, n: number, placed: ReadonlySet<string> | undefined): Need {
  const need = new Map<string, number>();
  for (const sig in dra.own) need.set(sig, (need.get(sig) ?? 0) + dra.own[sig]! * n);
  for (const s of dra.shared) {
    if (placed?.has(s.claim)) continue;
    for (const sig in s.devices) need.set(sig, (need.get(sig) ?? 0) + s.devices[sig]!);
  }
  return [...need];
}

/** Why the pod's claims rule a node out whatever its free devices (undefined: they do not). */
export function deviceStaticReason(
  dra: PodDevices, capacity: Resources, labels: Record<string, string>, nodeName: string | undefined,
  blocked: readonly string[] | undefined, table: DraTable | undefined,
): string | undefined {
  if (dra.unmodeled) return `cannot model DRA claim: ${dra.unmodeled}`;
  for (const sel of dra.pinned) if (!pinnedMatches(sel, labels, nodeName)) return 'DRA claim allocated elsewhere';
  const t = table ?? EMPTY_TABLE;
  if (blocked?.length) {
    const sigs = [...Object.keys(dra.own), ...dra.shared.flatMap((s) => Object.keys(s.devices))];
    const bad = sigs.find((s) => blocked.includes(s));
    if (bad) return `DRA selector error on a device (${t.describe[bad] ?? bad})`;
  }
  if (!assign(needFor(dra, 1, undefined), capacity, t, false)) return `insufficient DRA devices (${describeNeed(dra, t)})`;
  return undefined;
}

function pinnedMatches(sel: V1NodeSelector, labels: Record<string, string>, nodeName: string | undefined): boolean {
  return nodeSelectorTermsMatch(sel, labels, nodeName);
}

/** How many of `max` pods the bin's free devices take (shared claims already placed there cost nothing). */
export function deviceAllowance(dra: PodDevices, free: Resources, table: DraTable | undefined, placed: ReadonlySet<string> | undefined, max: number): number {
  const t = table ?? EMPTY_TABLE;
  if (!assign(needFor(dra, 1, placed), free, t, false)) return 0;
  if (Object.keys(dra.own).length === 0) return max;
  let lo = 1;
  let hi = max;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (assign(needFor(dra, mid, placed), free, t, false)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Takes n pods' devices from the bin's free room (and adds them to `used` for new nodes). */
export function takeDevices(dra: PodDevices, n: number, free: Resources, used: Resources | undefined, table: DraTable | undefined, placed: Set<string>): void {
  const t = table ?? EMPTY_TABLE;
  const before = used ? { ...free } : undefined;
  if (!assign(needFor(dra, n, placed), free, t, true)) throw new Error('takeDevices: the devices do not fit (allowance not checked)');
  for (const s of dra.shared) placed.add(s.claim);
  if (used && before) for (const k in before) if (free[k] !== before[k]) used[k] = (used[k] ?? 0) + (before[k]! - free[k]!);
}

export function describeNeed(dra: PodDevices, table: DraTable): string {
  const parts: string[] = [];
  for (const sig in dra.own) parts.push(`${dra.own[sig]} × ${table.describe[sig] ?? sig}`);
  for (const s of dra.shared) for (const sig in s.devices) parts.push(`${s.devices[sig]} × ${table.describe[sig] ?? sig} (shared claim ${s.claim})`);
  return parts.join(', ');
}
