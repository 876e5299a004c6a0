import type { V1Pod } from '@kubernetes/client-node';
import { Counter } from 'prom-client';
import type { DemandIntake } from '../provisioning/demand-intake.js';
import type { Clock } from '../provisioning/clock.js';
import { summarizeValue } from '../scheduling/value-summary.js';
import type { JsonRoute } from '../server/app.js';
import { METRIC_PREFIX, registry } from '../server/metrics.js';
import { isDemand, toSchedulingPod } from '../scheduling/pod-demand.js';
import { admissionReviewResponse, parseAdmissionReview, type AdmissionRequest, type AdmissionResponse, type AdmissionReview } from './admission-review.js';
import { firstSeenPatch } from './first-seen.js';

export const MUTATE_PODS_PATH = '/mutate/pods';

/**
 * Body limit of the webhook: kube-apiserver refuses requests over 3 MiB, so the pod in a
 * review is at most that; the rest is for the AdmissionReview envelope (userInfo etc.).
 * A bigger review gets 413 and, the webhook failing open, the pod is admitted unpatched.
 */
export const MUTATE_PODS_MAX_BODY_BYTES = 3 * 1024 * 1024 + 256 * 1024;

/** Label values of the operation label: the admission operations, anything else is `other`. */
const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

const reviews = new Counter({
  name: `${METRIC_PREFIX}webhook_admission_reviews_total`,
  help: 'Pod admission reviews answered, by operation and outcome (patched, unchanged, error).',
  labelNames: ['operation', 'outcome'] as const,
  registers: [registry],
});

export interface MutatePodsOptions {
  intake: DemandIntake;
  clock: Clock;
  logError?: (message: string) => void;
}

/**
 * `POST /mutate/pods`: stamps the first-seen annotation and records the pod as demand.
 * Always allows (the webhook must never block a pod): a review it cannot act on, or an
 * internal error, is answered `allowed: true` with no patch. Only the envelope is
 * validated strictly (400 for a body that is not an AdmissionReview with a request).
 */
export function mutatePodsRoute(opts: MutatePodsOptions): JsonRoute {
  const logError = opts.logError ?? ((m: string) => console.error(m));
  const demand = deferredDemand(opts.intake, logError);
  return {
    path: MUTATE_PODS_PATH,
    maxBodyBytes: MUTATE_PODS_MAX_BODY_BYTES,
    handle(body: unknown): AdmissionReview {
      const request = parseAdmissionReview(body);
      // Label values come from a fixed set: a caller must not be able to mint series.
      const operation = typeof request.operation === 'string' && OPERATIONS.has(request.operation) ? request.operation : 'other';
      try {
        const response = review(request, opts.clock, demand);
        reviews.inc({ operation, outcome: response.patch ? 'patched' : 'unchanged' });
        return admissionReviewResponse(response);
      } catch (err) {
        reviews.inc({ operation, outcome: 'error' });
        logError(`mutate pods: review ${summarizeValue(request.uid)} failed open: ${oneLine(err)}`);
        return admissionReviewResponse({ uid: request.uid, allowed: true });
      }
    },
  };
}

function review(request: AdmissionRequest, clock: Clock, demand: (request: AdmissionRequest, now: number) => void): AdmissionResponse {
  const response: AdmissionResponse = { uid: request.uid, allowed: true };
  if (request.operation !== 'CREATE' || !isPodRequest(request) || request.subResource) return response;
  if (typeof request.object !== 'object' || request.object === null) return response;
  const now = clock.now();
  const patch = firstSeenPatch(request.object, new Date(now));
  if (patch.length === 0) return response;
  response.patchType = 'JSONPatch';
  response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
  // Only a first sighting is demand (a stamped pod was recorded already); a dry run
  // creates nothing, so it records nothing.
  if (!request.dryRun) demand(request, now);
  return response;
}

function isPodRequest(request: AdmissionRequest): boolean {
  const r = request.resource;
  if (r) return r.group === '' && r.resource === 'pods';
  const k = request.kind;
  return !!k && k.group === '' && k.kind === 'Pod';
}

/**
 * Demand is recorded after the response is written (in one batch on the next turn of
 * the event loop), so intake listeners never add to the review's latency.
 */
function deferredDemand(intake: DemandIntake, logError: (m: string) => void): (request: AdmissionRequest, now: number) => void {
  let pending: { request: AdmissionRequest; now: number }[] = [];
  const flush = () => {
    const batch = pending;
    pending = [];
    for (const { request, now } of batch) {
      try {
        recordDemand(request, now, intake);
      } catch (err) {
        logError(`mutate pods: demand of review ${summarizeValue(request.uid)} not recorded: ${oneLine(err)}`);
      }
    }
  };
  return (request, now) => {
    if (pending.push({ request, now }) === 1) setImmediate(flush);
  };
}

function recordDemand(request: AdmissionRequest, now: number, intake: DemandIntake): void {
  const object = request.object as V1Pod;
  const meta = object.metadata ?? {};
  // On CREATE the namespace is in the request; the object may not carry it yet. Keep
  // only what the scheduling view reads (not managedFields or annotations).
  const pod: V1Pod = {
    metadata: {
      name: meta.name, generateName: meta.generateName, uid: meta.uid, labels: meta.labels, ownerReferences: meta.ownerReferences,
      namespace: meta.namespace || request.namespace || 'default',
    },
    spec: object.spec,
    status: object.status,
  };
  if (!isDemand(pod)) return;
  const generateName = meta.name ? undefined : meta.generateName;
  // The compact scheduling view is built here, after the response has gone out, so the
  // record keeps no reference to the rest of the review (spec, status, managedFields).
  intake.record({
    source: 'webhook',
    observedAt: now,
    pod: toSchedulingPod(pod),
    ...(typeof generateName === 'string' ? { generateName: generateName.slice(0, 253) } : {}),
    requestUid: request.uid.slice(0, 128),
  });
}

function oneLine(err: unknown): string {
  const message = err instanceof Error ? err.message : 'unknown error';
  return message.split('\n', 1)[0]!.slice(0, 300);
}
