import type { V1Pod } from '@kubernetes/client-node';
import { expect } from 'chai';
import fastJsonPatch from 'fast-json-patch';
import { DemandIntake } from '../../../src/provisioning/demand-intake.js';
import { HttpError } from '../../../src/server/http-error.js';
import { FIRST_SEEN_ANNOTATION, firstSeenOf } from '../../../src/webhook/first-seen.js';
import { mutatePodsRoute } from '../../../src/webhook/mutate-pods.js';
import type { AdmissionReview } from '../../../src/webhook/admission-review.js';

/** Demand is recorded after the response, on the next turn of the event loop. */
const tick = () => new Promise((r) => setImmediate(r));
const NOW = Date.UTC(2026, 10, 30, 1, 2, 3, 456);
const clock = { now: () => NOW, setTimer: () => () => undefined };

function pod(overrides: Partial<V1Pod['metadata']> = {}, spec: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'web-7d4b9c-', labels: { app: 'web' }, ...overrides },
    spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: '250m', memory: '64Mi' } } }], ...spec },
  };
}

function review(object: unknown, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      operation: 'CREATE',
      namespace: 'shop',
      object,
      dryRun: false,
      ...extra,
    },
  };
}

function decodePatch(r: AdmissionReview): fastJsonPatch.Operation[] {
  return JSON.parse(Buffer.from(r.response!.patch!, 'base64').toString('utf8'));
}

describe('POST /mutate/pods', () => {
  let intake: DemandIntake;
  let route: ReturnType<typeof mutatePodsRoute>;
  beforeEach(() => {
    intake = new DemandIntake(100);
    route = mutatePodsRoute({ intake, clock, logError: () => undefined });
  });

  it('echoes the uid, allows, and patches with a base64 JSONPatch array', () => {
    const out = route.handle(review(pod())) as AdmissionReview;
    expect(out.apiVersion).to.equal('admission.k8s.io/v1');
    expect(out.kind).to.equal('AdmissionReview');
    expect(out.response!.uid).to.equal('705ab4f5-6393-11e8-b7cc-42010a800002');
    expect(out.response!.allowed).to.equal(true);
    expect(out.response!.patchType).to.equal('JSONPatch');
    const ops = decodePatch(out);
    expect(ops).to.be.an('array');
    expect(ops).to.deep.equal([{ op: 'add', path: '/metadata/annotations', value: { [FIRST_SEEN_ANNOTATION]: '2026-11-30T01:02:03.456Z' } }]);
  });

  it('adds one escaped key when the pod already has annotations, keeping the others', () => {
    const p = pod({ annotations: { 'a.example/x': '1' } });
    const ops = decodePatch(route.handle(review(p)) as AdmissionReview);
    expect(ops).to.deep.equal([{ op: 'add', path: '/metadata/annotations/headroom.dev~1first-seen', value: '2026-11-30T01:02:03.456Z' }]);
    const patched = fastJsonPatch.applyPatch(structuredClone(p), ops).newDocument;
    expect(patched.metadata!.annotations).to.deep.equal({ 'a.example/x': '1', [FIRST_SEEN_ANNOTATION]: '2026-11-30T01:02:03.456Z' });
    expect(firstSeenOf(patched)!.getTime()).to.equal(NOW);
  });

  it('is idempotent: a stamped pod gets no patch and is not recorded again', async () => {
    const first = route.handle(review(pod())) as AdmissionReview;
    const stamped = fastJsonPatch.applyPatch(pod(), decodePatch(first)).newDocument;
    const second = route.handle(review(stamped)) as AdmissionReview;
    expect(second.response).to.deep.equal({ uid: '705ab4f5-6393-11e8-b7cc-42010a800002', allowed: true });
    await tick();
    expect(intake.size).to.equal(1);
  });

  it('records the shape and owner of a not-yet-named pod as demand', async () => {
    const p = pod({ ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c', uid: 'rs-uid', controller: true }] });
    route.handle(review(p));
    await tick();
    const [rec] = intake.drain();
    expect(rec!.source).to.equal('webhook');
    expect(rec!.observedAt).to.equal(NOW);
    expect(rec!.generateName).to.equal('web-7d4b9c-');
    expect(rec!.requestUid).to.equal('705ab4f5-6393-11e8-b7cc-42010a800002');
    expect(rec!.pod.namespace).to.equal('shop');
    expect(rec!.pod.owner).to.equal('ReplicaSet/shop/web-7d4b9c');
    expect(rec!.pod.requests).to.include({ cpu: 250, memory: 64 * 1024 * 1024, pods: 1 });
  });

  it('answers a dryRun with the same patch but records nothing', async () => {
    const out = route.handle(review(pod(), { dryRun: true })) as AdmissionReview;
    expect(decodePatch(out)).to.have.length(1);
    await tick();
    expect(intake.size).to.equal(0);
  });

  it('does not record pods that are not demand (bound, DaemonSet, gated)', async () => {
    route.handle(review(pod({}, { nodeName: 'n1' })));
    route.handle(review(pod({ ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'ds', uid: 'x', controller: true }] })));
    route.handle(review(pod({}, { schedulingGates: [{ name: 'wait' }] })));
    await tick();
    expect(intake.size).to.equal(0);
  });

  it('allows without patch for UPDATE, other resources and subresources', async () => {
    for (const extra of [
      { operation: 'UPDATE' },
      { resource: { group: 'apps', version: 'v1', resource: 'deployments' } },
      { subResource: 'status' },
    ]) {
      const out = route.handle(review(pod(), extra)) as AdmissionReview;
      expect(out.response, JSON.stringify(extra)).to.deep.equal({ uid: '705ab4f5-6393-11e8-b7cc-42010a800002', allowed: true });
    }
    await tick();
    expect(intake.size).to.equal(0);
  });

  it('fails open on a pod object it cannot read', () => {
    for (const object of [null, 'x', { metadata: { annotations: 'weird' }, spec: 7 }]) {
      const out = route.handle(review(object)) as AdmissionReview;
      expect(out.response!.allowed).to.equal(true);
      expect(out.response!.uid).to.equal('705ab4f5-6393-11e8-b7cc-42010a800002');
    }
  });

  it('rejects a body that is not an admission.k8s.io/v1 AdmissionReview with a request (400)', () => {
    const bad = [
      [],
      { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'a' } },
      { apiVersion: 'admission.k8s.io/v1', kind: 'Pod', request: { uid: 'a' } },
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: '' } },
    ];
    for (const body of bad) {
      expect(() => route.handle(body), JSON.stringify(body)).to.throw(HttpError).with.property('status', 400);
    }
  });
});
