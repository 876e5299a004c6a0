import type { KubernetesObject, V1PodTemplateSpec } from '@kubernetes/client-node';
import {
  ATOMIC_SCALE_UP_CLASS, CHECK_CAPACITY_CLASS, CONDITION, MESSAGE, REASON, SUPPORTED_CLASSES,
  conditionOf, consumedRequest, isTrue, parseProvisioningRequest,
  type ProvisioningRequestView, type RequestCondition,
} from '../api/provisioning-request.js';
import { ObjectValidationError } from '../api/validation-error.js';
import { buildSnapshot } from '../cluster/build-snapshot.js';
import { lastInputMemo } from '../cluster/input-memo.js';
import type { ClusterObjects } from '../cluster/objects.js';
import type { ClusterSnapshot } from '../cluster/snapshot.js';
import type { Plan } from '../packing/plan.js';
import type { SchedulingPod } from '../scheduling/scheduling-pod.js';
import { BUFFER_PRIORITY } from './capacity-buffers.js';
import { enforceLimits } from './limits.js';
import { withStandalonePools } from './standalone.js';
import { templatePods } from './template-pods.js';

/**
 * ProvisioningRequests (SIG Autoscaling) as Cluster Autoscaler serves them (ADR 0073):
 * - check-capacity.autoscaling.x-k8s.io: do all pods fit on the nodes that exist now?
 *   Provisioned True (CapacityIsFound) or False (CapacityIsNotFound); never scales.
 * - best-effort-atomic-scale-up.autoscaling.x-k8s.io: do all pods of all podSets fit
 *   once groups are scaled, within max sizes, NodePool limits and every scheduling
 *   constraint? Then Provisioned=True and the pods are booked (virtual pods the next
 *   provisioning cycle scales for, all groups in one decision); else nothing is booked,
 *   so nothing scales, and Provisioned=False says why.
 * - A booking (Provisioned=True) holds capacity for the pods that name the request in
 *   the consume annotation until they arrive or it expires (BookingExpired); meanwhile
 *   the disruption what-if counts it, so consolidation leaves it alone.
 * Decisions are pure over the objects and `now`; the solve function is passed in.
 */

export const DEFAULT_BOOKING_MS = 10 * 60_000;
/** Bookings and candidates sit just above CapacityBuffers' chunks, below real pods. */
const REQUEST_PRIORITY = BUFFER_PRIORITY + 1;

export interface ProvisioningRequestOptions {
  /** How long Provisioned capacity is held for the consuming pods. Default 10 min. */
  bookingMs?: number;
}

export type RequestOutcome = 'accepted' | 'provisioned' | 'capacity-found' | 'capacity-not-found' | 'failed' | 'booking-expired';

export interface RequestDecision {
  namespace: string;
  name: string;
  uid: string;
  className: string;
  /** Conditions to set (type -> condition); others are kept. */
  set: RequestCondition[];
  /** Transitions, for Events and metrics. */
  outcomes: Array<{ outcome: RequestOutcome; type: 'Normal' | 'Warning'; reason: string; message: string }>;
}

interface Parsed {
  view: ProvisioningRequestView;
  obj: KubernetesObject;
}

function key(ns: string | undefined, name: string | undefined): string {
  return `${ns ?? 'default'}/${name ?? ''}`;
}

function parseAll(objects: ClusterObjects): { ok: Parsed[]; invalid: Array<{ obj: KubernetesObject; message: string }> } {
  const ok: Parsed[] = [];
  const invalid: Array<{ obj: KubernetesObject; message: string }> = [];
  for (const obj of objects.provisioningRequests ?? []) {
    try {
      ok.push({ view: parseProvisioningRequest(obj), obj });
    } catch (err) {
      if (!(err instanceof ObjectValidationError)) throw err;
      invalid.push({ obj, message: `${err.field}: ${err.problem}` });
    }
  }
  // Oldest first, as Cluster Autoscaler serves them; name breaks ties.
  ok.sort((a, b) => a.view.createdAt - b.view.createdAt || key(a.view.namespace, a.view.name).localeCompare(key(b.view.namespace, b.view.name)));
  return { ok, invalid };
}

function templates(objects: ClusterObjects): Map<string, V1PodTemplateSpec | undefined> {
  const m = new Map<string, V1PodTemplateSpec | undefined>();
  for (const t of (objects.podTemplates ?? []) as Array<KubernetesObject & { template?: V1PodTemplateSpec }>) m.set(key(t.metadata?.namespace, t.metadata?.name), t.template);
  return m;
}

/** Pods that name each request in a consume annotation (any non-terminal pod). */
function consumers(objects: ClusterObjects): Map<string, number> {
  const m = new Map<string, number>();
  for (const p of objects.pods) {
    const phase = p.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    const r = consumedRequest(p);
    if (r) m.set(r, (m.get(r) ?? 0) + 1);
  }
  return m;
}

/** The request's pods (all podSets, minus `skip` already consumed), or a one-line error. */
function requestPods(view: ProvisioningRequestView, tpl: Map<string, V1PodTemplateSpec | undefined>, skip = 0): SchedulingPod[] | string {
  const out: SchedulingPod[] = [];
  let toSkip = skip;
  for (const [i, ps] of view.podSets.entries()) {
    const t = tpl.get(key(view.namespace, ps.podTemplateRef.name));
    if (!t?.spec) return `podSets[${i}]: PodTemplate ${view.namespace}/${ps.podTemplateRef.name} not found`;
    const skipHere = Math.min(toSkip, ps.count);
    toSkip -= skipHere;
    try {
      out.push(...templatePods({
        template: t, namespace: view.namespace, baseName: `provreq-${view.name}-${i}`, uid: `${view.uid}-${i}`, count: ps.count - skipHere,
        owner: `ProvisioningRequest/${view.namespace}/${view.name}`, priority: REQUEST_PRIORITY, offset: skipHere, demand: true,
      }));
    } catch (err) {
      return `podSets[${i}]: PodTemplate ${view.namespace}/${ps.podTemplateRef.name}: ${(err as Error).message}`;
    }
  }
  return out;
}

/** Provisioned, not failed, expired or revoked: its capacity is held. */
function isBooked(view: ProvisioningRequestView): boolean {
  return SUPPORTED_CLASSES.includes(view.className) && isTrue(view, CONDITION.Provisioned)
    && !isTrue(view, CONDITION.Failed) && !isTrue(view, CONDITION.BookingExpired) && !isTrue(view, CONDITION.CapacityRevoked);
}

const NO_BOOKINGS = { all: [], atomic: [] };

function bookings(objects: ClusterObjects): { all: SchedulingPod[]; atomic: SchedulingPod[] } {
  if (!objects.provisioningRequests?.length) return NO_BOOKINGS;
  return bookingMemo(objects.provisioningRequests, objects.podTemplates, objects.pods, objects);
}

const bookingMemo = lastInputMemo((_r: unknown, _t: unknown, _p: unknown, objects: ClusterObjects) => bookingsUncached(objects));

function bookingsUncached(objects: ClusterObjects): { all: SchedulingPod[]; atomic: SchedulingPod[] } {
  const all: SchedulingPod[] = [];
  const atomic: SchedulingPod[] = [];
  const tpl = templates(objects);
  const used = consumers(objects);
  for (const { view } of parseAll(objects).ok) {
    if (!isBooked(view)) continue;
    const pods = requestPods(view, tpl, used.get(key(view.namespace, view.name)) ?? 0);
    if (typeof pods === 'string') continue;
    all.push(...pods);
    if (view.className === ATOMIC_SCALE_UP_CLASS) atomic.push(...pods);
  }
  return { all, atomic };
}

/**
 * Booked capacity the provisioner scales for: atomic scale-up bookings not yet
 * consumed. (A check-capacity booking never scales anything.)
 */
export function provisioningRequestPods(objects: ClusterObjects): SchedulingPod[] {
  return bookings(objects).atomic;
}

/** Every booking, for the disruption what-if: consolidation keeps booked capacity. */
export function bookedPods(objects: ClusterObjects): SchedulingPod[] {
  return bookings(objects).all;
}

export type PlanFn = (snapshot: ClusterSnapshot) => Plan | Promise<Plan>;

function cond(view: ProvisioningRequestView, type: string, status: 'True' | 'False', reason: string, message: string, now: string): RequestCondition {
  return { type, status, reason, message, lastTransitionTime: now, ...(view.generation !== undefined ? { observedGeneration: view.generation } : {}) };
}

/** A one-line why for pods left over, from the plan. */
function whyNot(plan: Plan, pods: readonly SchedulingPod[], trimmed: string[]): string {
  const keys = new Set(pods.map((p) => p.key));
  const left = plan.unschedulable.filter((u) => keys.has(u.pod));
  const parts: string[] = [];
  if (left.length) parts.push(`${left.length} of ${pods.length} pod(s) cannot be placed: ${left[0]!.reason}`);
  if (trimmed.length) parts.push(`scale-up beyond limits: ${trimmed.join('; ')}`);
  return parts.join('; ');
}

/**
 * What to write on each supported ProvisioningRequest now. Requests are served oldest
 * first; each candidate is checked on a snapshot that already holds the real pending
 * pods and every booking (including those granted earlier in this call).
 */
export async function decideProvisioningRequests(
  objects: ClusterObjects, nowMs: number, plan: PlanFn, options: ProvisioningRequestOptions = {},
): Promise<RequestDecision[]> {
  const bookingMs = options.bookingMs ?? DEFAULT_BOOKING_MS;
  const now = new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const tpl = templates(objects);
  const used = consumers(objects);
  const { ok, invalid } = parseAll(objects);
  const granted: SchedulingPod[] = [...bookings(objects).all];
  const out: RequestDecision[] = [];
  // A request of a supported class whose spec cannot be read fails with its one line.
  for (const { obj, message } of invalid) {
    const cls = (obj as { spec?: { provisioningClassName?: unknown } }).spec?.provisioningClassName;
    const conditions = ((obj as { status?: { conditions?: RequestCondition[] } }).status?.conditions ?? []);
    if (typeof cls !== 'string' || !SUPPORTED_CLASSES.includes(cls) || conditions.some((c) => c.type === CONDITION.Failed && c.status === 'True')) continue;
    const namespace = obj.metadata?.namespace ?? 'default';
    const name = obj.metadata?.name ?? '';
    const generation = obj.metadata?.generation;
    out.push({
      namespace, name, uid: obj.metadata?.uid ?? `${namespace}/${name}`, className: cls,
      set: [{ type: CONDITION.Failed, status: 'True', reason: REASON.FailedToCreatePods, message, lastTransitionTime: now, ...(generation !== undefined ? { observedGeneration: generation } : {}) }],
      outcomes: [{ outcome: 'failed', type: 'Warning', reason: REASON.FailedToCreatePods, message }],
    });
  }
  for (const { view } of ok) {
    if (!SUPPORTED_CLASSES.includes(view.className)) continue; // other classes are left alone
    const d: RequestDecision = { namespace: view.namespace, name: view.name, uid: view.uid, className: view.className, set: [], outcomes: [] };
    const setCond = (type: string, status: 'True' | 'False', reason: string, message: string) => {
      const prev = conditionOf(view, type);
      if (prev && prev.status === status && prev.reason === reason && prev.message === message) return false;
      d.set.push(cond(view, type, status, reason, message, now));
      return true;
    };
    const transition = (outcome: RequestOutcome, type: 'Normal' | 'Warning', reason: string, message: string) => d.outcomes.push({ outcome, type, reason, message });
    if (!conditionOf(view, CONDITION.Accepted)) {
      setCond(CONDITION.Accepted, 'True', REASON.Accepted, MESSAGE.Accepted);
      transition('accepted', 'Normal', REASON.Accepted, MESSAGE.Accepted);
    }
    const done = isTrue(view, CONDITION.Failed) || isTrue(view, CONDITION.BookingExpired) || isTrue(view, CONDITION.CapacityRevoked);
    if (done) {
      if (d.set.length) out.push(d);
      continue;
    }
    if (isTrue(view, CONDITION.Provisioned)) {
      // A booking: expires unless every pod has arrived.
      const since = Date.parse(conditionOf(view, CONDITION.Provisioned)!.lastTransitionTime);
      const total = view.podSets.reduce((n, ps) => n + ps.count, 0);
      const arrived = used.get(key(view.namespace, view.name)) ?? 0;
      if (arrived < total && Number.isFinite(since) && nowMs - since >= bookingMs) {
        setCond(CONDITION.BookingExpired, 'True', REASON.CapacityReservationTimeExpired, MESSAGE.CapacityReservationTimeExpired);
        transition('booking-expired', 'Normal', REASON.CapacityReservationTimeExpired, `${MESSAGE.CapacityReservationTimeExpired}: ${arrived} of ${total} pod(s) arrived`);
      }
      if (d.set.length) out.push(d);
      continue;
    }
    const validFor = Number(view.parameters.ValidUntilSeconds);
    if (view.className === ATOMIC_SCALE_UP_CLASS && Number.isFinite(validFor) && validFor > 0 && view.createdAt > 0 && nowMs - view.createdAt > validFor * 1000) {
      setCond(CONDITION.Failed, 'True', REASON.Expired, MESSAGE.Expired);
      transition('failed', 'Warning', REASON.Expired, MESSAGE.Expired);
      out.push(d);
      continue;
    }
    const pods = requestPods(view, tpl);
    if (typeof pods === 'string') {
      if (setCond(CONDITION.Failed, 'True', REASON.FailedToCreatePods, pods)) transition('failed', 'Warning', REASON.FailedToCreatePods, pods);
      out.push(d);
      continue;
    }
    const checkOnly = view.className === CHECK_CAPACITY_CLASS;
    const fit = await fits(objects, granted, pods, checkOnly, plan);
    if (fit.ok) {
      granted.push(...pods);
      const [reason, message] = checkOnly || !fit.scales ? [REASON.CapacityIsFound, MESSAGE.CapacityIsFound] : [REASON.CapacityIsProvisioned, MESSAGE.CapacityIsProvisioned];
      if (setCond(CONDITION.Provisioned, 'True', reason, message)) transition(checkOnly || !fit.scales ? 'capacity-found' : 'provisioned', 'Normal', reason, message);
    } else {
      const message = checkOnly ? `Capacity is not found in the cluster: ${fit.why}` : `Capacity is not found, nothing was scaled: ${fit.why}`;
      if (setCond(CONDITION.Provisioned, 'False', REASON.CapacityIsNotFound, message)) transition('capacity-not-found', 'Warning', REASON.CapacityIsNotFound, message);
    }
    if (d.set.length) out.push(d);
  }
  return out;
}

/**
 * Do `pods` all fit, after the real pending pods and `booked`? checkOnly: on the
 * nodes that exist now (no groups, no in-flight nodes). Otherwise with scale-up,
 * atomically: every pod placed and no scale-up trimmed by a max size or a limit.
 */
async function fits(
  objects: ClusterObjects, booked: readonly SchedulingPod[], pods: readonly SchedulingPod[], checkOnly: boolean, plan: PlanFn,
): Promise<{ ok: true; scales: boolean } | { ok: false; why: string }> {
  const built = buildSnapshot(objects, { strict: false, extraPendingPods: [...booked, ...pods] });
  let snapshot: ClusterSnapshot;
  if (checkOnly) snapshot = { ...built, groups: [], nodes: built.nodes.filter((n) => !n.inFlight) };
  else snapshot = withStandalonePools(built, objects).snapshot;
  const result = await plan(snapshot);
  const keys = new Set(pods.map((p) => p.key));
  const left = result.unschedulable.filter((u) => keys.has(u.pod));
  const allowed = enforceLimits(snapshot, result.scaleUps);
  const byId = new Map(allowed.map((u) => [`${u.kind}/${u.namespace}/${u.name}`, u]));
  const trimmed = result.scaleUps.filter((u) => u.to > u.from).flatMap((u) => {
    const a = byId.get(`${u.kind}/${u.namespace}/${u.name}`);
    return !a || a.to < u.to ? [`${u.kind} ${u.namespace}/${u.name} ${u.from} -> ${u.to} (${a?.trimmedBy ?? 'maxSize'} allows ${a?.to ?? u.from})`] : [];
  });
  if (left.length === 0 && trimmed.length === 0) {
    const onNew = result.placements.some((pl) => keys.has(pl.pod) && 'group' in pl);
    return { ok: true, scales: onNew };
  }
  if (checkOnly) return { ok: false, why: `${left.length} of ${pods.length} pod(s) do not fit on the existing nodes` };
  return { ok: false, why: whyNot(result, pods, trimmed) };
}

/**
 * `objects` with the decisions' conditions applied to their requests, as the cache
 * shows them once the leader has written them (what `headroom plan` plans on).
 */
export function applyDecisions(objects: ClusterObjects, decisions: readonly RequestDecision[]): ClusterObjects {
  if (decisions.length === 0 || !objects.provisioningRequests) return objects;
  const byUid = new Map(decisions.map((d) => [d.uid, d]));
  const requests = objects.provisioningRequests.map((r) => {
    const d = byUid.get(r.metadata?.uid ?? `${r.metadata?.namespace ?? 'default'}/${r.metadata?.name ?? ''}`);
    if (!d || d.set.length === 0) return r;
    const current = ((r.status as { conditions?: RequestCondition[] } | undefined)?.conditions ?? []).filter((c) => !d.set.some((n) => n.type === c.type));
    return { ...r, status: { ...(r.status ?? {}), conditions: [...current, ...d.set] } };
  });
  return { ...objects, provisioningRequests: requests };
}
