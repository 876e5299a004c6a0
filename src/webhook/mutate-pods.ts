import type { V1Pod } from '@kubernetes/client-node';
import { Counter } from 'prom-client';
import type { DemandIntake } from '../provisioning/demand-intake.js';
import type { Clock } from '../provisioning/clock.js';
import type { JsonRoute } from '../server/app.js';
import { METRIC_PREFIX, registry } from '../server/metrics.js';
import { isDemand, toSchedulingPod } from '../scheduling/pod-demand.js';
import { admissionReviewResponse, parseAdmissionReview, type AdmissionRequest, type AdmissionResponse, type AdmissionReview } from './admission-review.js';
import { firstSeenPatch } from './first-seen.js';

export const MUTATE_PODS_PATH = '/mutate/pods';

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
  return {
    path: MUTATE_PODS_PATH,
    handle(body: unknown): AdmissionReview {
      const request = parseAdmissionReview(body);
      const operation = request.operation ?? 'UNKNOWN';
      try {
        const response = review(request, opts);
        reviews.inc({ operation, outcome: response.patch ? 'patched' : 'unchanged' });
        return admissionReviewResponse(response);
      } catch (err) {
        reviews.inc({ operation, outcome: 'error' });
        logError(`mutate pods: review ${request.uid} failed open: ${(err as Error).message}`);
        return admissionReviewResponse({ uid: request.uid, allowed: true });
      }
    },
  };
}

function review(request: AdmissionRequest, opts: MutatePodsOptions): AdmissionResponse {
  const response: AdmissionResponse = { uid: request.uid, allowed: true };
  if (request.operation !== 'CREATE' || !isPodRequest(request) || request.subResource) return response;
  if (typeof request.object !== 'object' || request.object === null) return response;
  const now = opts.clock.now();
  const patch = firstSeenPatch(request.object, new Date(now));
  if (patch.length === 0) return response;
  response.patchType = 'JSONPatch';
  response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
  // Only a first sighting is demand (a stamped pod was recorded already); a dry run
  // creates nothing, so it records nothing.
  if (!request.dryRun) recordDemand(request, now, opts.intake);
  return response;
}

function isPodRequest(request: AdmissionRequest): boolean {
  const r = request.resource;
  if (r) return r.group === '' && r.resource === 'pods';
  const k = request.kind;
  return !!k && k.group === '' && k.kind === 'Pod';
}

function recordDemand(request: AdmissionRequest, now: number, intake: DemandIntake): void {
  const object = request.object as V1Pod;
  // On CREATE the namespace is in the request; the object may not carry it yet.
  const pod: V1Pod = { ...object, metadata: { ...object.metadata, namespace: object.metadata?.namespace || request.namespace || 'default' } };
  if (!isDemand(pod)) return;
  const generateName = pod.metadata?.name ? undefined : pod.metadata?.generateName;
  intake.record({
    source: 'webhook',
    observedAt: now,
    pod: toSchedulingPod(pod),
    ...(generateName ? { generateName } : {}),
    requestUid: request.uid,
  });
}
