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

/**
 * A pod's device demand ordered as assign() walks it (most constrained signature
 * first, ties in the order needFor() makes them), split into what each pod of the
 * class needs alone and what its shared claims need once: for n pods with none of
 * its shared claims placed, signature i needs `own[i] * n + shared[i]`. Made once per
 * PodDevices and table (the packers ask per node, group and pod count).
 */
interface Plan {
  table: DraTable;
  sigs: string[];
  own: number[];
  shared: number[];
  /** The reason of deviceStaticReason when the devices do not fit, made when first needed. */
  describe?: string;
}
const plans = new WeakMap<PodDevices, Plan>();

function planOf(dra: PodDevices, table: DraTable): Plan {
  let p = plans.get(dra);
  if (p && p.table === table) return p;
  const order = sortNeed(needFor(dra, 1, undefined), table);
  const sigs = order.map((e) => e[0]);
  const own = order.map((e) => dra.own[e[0]] ?? 0);
  const shared = order.map((e, i) => e[1] - own[i]!);
  p = { table, sigs, own, shared };
  plans.set(dra, p);
  return p;
}

function sortNeed(need: Need, table: DraTable): Need {
  return need.slice().sort((a, b) => (table.atomsOf[a[0]]?.length ?? 0) - (table.atomsOf[b[0]]?.length ?? 0));
}

/** Whether none of the pod's shared claims is placed yet (then its cached plan applies). */
function nonePlaced(dra: PodDevices, placed: ReadonlySet<string> | undefined): boolean {
  if (!placed || placed.size === 0) return true;
  for (const s of dra.shared) if (placed.has(s.claim)) return false;
  return true;
}

/** Free devices (positive counts) of the atoms serving plan entry i. */
function freeFor(p: Plan, i: number, free: Resources): number {
  const atoms = p.table.atomsOf[p.sigs[i]!] ?? [];
  let sum = 0;
  for (let j = 0; j < atoms.length; j++) {
    const have = free[atoms[j]!] ?? 0;
    if (have > 0) sum += have;
  }
  return sum;
}

/**
 * Takes `left` devices from `atoms` in order, first what `scratch` already holds of an atom,
 * else `free`'s, writing what is left into `scratch`; returns what could not be taken.
 */
function takeFrom(atoms: readonly string[], left: number, scratch: Resources, free: Resources): number {
  for (let j = 0; j < atoms.length && left > 0; j++) {
    const atom = atoms[j]!;
    const have = atom in scratch ? scratch[atom]! : free[atom] ?? 0;
    if (have <= 0) continue;
    const take = have < left ? have : left;
    scratch[atom] = have - take;
    left -= take;
  }
  return left;
}

/** assign() on a cached plan for n pods. */
function assignPlan(p: Plan, n: number, free: Resources, apply: boolean): boolean {
  // One signature and only a check: it fits when its atoms hold enough between them.
  if (!apply && p.sigs.length === 1) return p.own[0]! * n + p.shared[0]! <= freeFor(p, 0, free);
  const scratch: Resources = apply ? free : {};
  const atomsOf = p.table.atomsOf;
  for (let i = 0; i < p.sigs.length; i++) {
    const left = p.own[i]! * n + p.shared[i]!;
    if (left === 0) continue;
    if (takeFrom(atomsOf[p.sigs[i]!] ?? [], left, scratch, free) > 0) return false;
  }
  return true;
}

/** Takes (or, with `apply` false, only checks) `need` from `free`; true when all of it fits. */
function assign(need: Need, free: Resources, table: DraTable, apply: boolean): boolean {
  const scratch: Resources = apply ? free : {};
  const order = sortNeed(need, table);
  for (const [sig, count] of order) {
    if (takeFrom(table.atomsOf[sig] ?? [], count, scratch, free) > 0) return false;
  }
  return true;
}

/** Whether n pods' devices fit `free` (taking them when `apply`), through the cached plan when it applies. */
function fits(dra: PodDevices, n: number, free: Resources, table: DraTable, placed: ReadonlySet<string> | undefined, apply: boolean): boolean {
  if (nonePlaced(dra, placed)) return assignPlan(planOf(dra, table), n, free, apply);
  return assign(needFor(dra, n, placed), free, table, apply);
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

/** Whether the pod's claims need any device before any of them is placed (a node without devices then never runs it). */
export function needsDevices(dra: PodDevices): boolean {
  if (hasOwn(dra)) return true;
  for (const s of dra.shared) for (const _ in s.devices) return true;
  return false;
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
  if (!fits(dra, 1, capacity, t, undefined, false)) {
    const p = planOf(dra, t);
    return (p.describe ??= `insufficient DRA devices (${describeNeed(dra, t)})`);
  }
  return undefined;
}

function pinnedMatches(sel: V1NodeSelector, labels: Record<string, string>, nodeName: string | undefined): boolean {
  return nodeSelectorTermsMatch(sel, labels, nodeName);
}

/** How many of `max` pods the bin's free devices take (shared claims already placed there cost nothing). */
export function deviceAllowance(dra: PodDevices, free: Resources, table: DraTable | undefined, placed: ReadonlySet<string> | undefined, max: number): number {
  const t = table ?? EMPTY_TABLE;
  if (!fits(dra, 1, free, t, placed, false)) return 0;
  if (!hasOwn(dra)) return max;
  if (nonePlaced(dra, placed)) {
    // One signature: the largest n with own * n + shared <= its free devices (what the search below finds).
    const p = planOf(dra, t);
    if (p.sigs.length === 1) return Math.min(max, Math.floor((freeFor(p, 0, free) - p.shared[0]!) / p.own[0]!));
  }
  let lo = 1;
  let hi = max;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(dra, mid, free, t, placed, false)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Takes n pods' devices from the bin's free room (and adds them to `used` for new nodes). */
export function takeDevices(dra: PodDevices, n: number, free: Resources, used: Resources | undefined, table: DraTable | undefined, placed: Set<string>): void {
  const t = table ?? EMPTY_TABLE;
  const before = used ? { ...free } : undefined;
  if (!fits(dra, n, free, t, placed, true)) throw new Error('takeDevices: the devices do not fit (allowance not checked)');
  for (const s of dra.shared) placed.add(s.claim);
  if (used && before) for (const k in before) if (free[k] !== before[k]) used[k] = (used[k] ?? 0) + (before[k]! - free[k]!);
}

function hasOwn(dra: PodDevices): boolean {
  for (const _ in dra.own) return true;
  return false;
}

export function describeNeed(dra: PodDevices, table: DraTable): string {
  const parts: string[] = [];
  for (const sig in dra.own) parts.push(`${dra.own[sig]} × ${table.describe[sig] ?? sig}`);
  for (const s of dra.shared) for (const sig in s.devices) parts.push(`${s.devices[sig]} × ${table.describe[sig] ?? sig} (shared claim ${s.claim})`);
  return parts.join(', ');
}
