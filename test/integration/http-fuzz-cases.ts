/**
 * The request families of the HTTP fuzz test (issue 10): a deterministic, seeded stream of
 * malformed and valid requests for `headroom serve`, each with the statuses it may get.
 * fast-check supplies arbitrary JSON values and unicode strings (sampled with the same
 * seed); the structural families (nesting, huge arrays, oversized bodies, quantities,
 * prototype keys) are built here from a seeded PRNG.
 */
import fc from 'fast-check';
import { rng } from '../bench/workload.js';

export const WEBHOOK = '/mutate/pods';
export const FILTER = '/scheduler/filter';
export const PRIORITIZE = '/scheduler/prioritize';
const JSON_PATHS = [WEBHOOK, FILTER, PRIORITIZE] as const;

/** Body limits of the server under test (src/webhook/mutate-pods.ts, src/extender/routes.ts). */
export const WEBHOOK_LIMIT = 3 * 1024 * 1024 + 256 * 1024;
export const EXTENDER_LIMIT = 3 * 1024 * 1024 + 5_000 * 256;

/** Node names in the fuzz snapshot; `draining` carries the disruption annotation. */
export const NODE_NAMES = ['busy', 'idle', 'draining'];

export interface FuzzCase {
  family: string;
  method: string;
  path: string;
  /** The body, or a declared size streamed as spaces (`chunked` without content-length). */
  body?: Buffer | { streamBytes: number; chunked: boolean; declaredBytes?: number };
  /** Statuses this case may be answered with. */
  expect: readonly number[];
}

const ADMISSION = 'admission.k8s.io/v1';

export function validPod(cpu: unknown = '500m', memory: unknown = '1Gi', extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    metadata: { generateName: 'web-', namespace: 'shop', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: 'u', controller: true }] },
    spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu, memory } } }] },
    ...extra,
  };
}

export function review(uid: string, object: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: ADMISSION, kind: 'AdmissionReview',
    request: { uid, operation: 'CREATE', kind: { group: '', version: 'v1', kind: 'Pod' }, resource: { group: '', version: 'v1', resource: 'pods' }, namespace: 'shop', object, ...extra },
  };
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v));

/** `[[[...]]]` or `{"a":{"a":...}}` `depth` deep, as text (JSON.stringify could not build it). */
function nestedText(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/**
 * `count` cases, deterministic for a seed, cycling through the families with the weights
 * below so that every family appears many times in any prefix of the stream.
 */
export function* fuzzCases(seed: number, count: number): Generator<FuzzCase> {
  const rand = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  // fast-check pools, sampled once with the run's seed.
  const jsonValues = fc.sample(fc.jsonValue({ maxDepth: 6 }), { seed, numRuns: 500 });
  const unicode = fc.sample(fc.string({ unit: 'binary', maxLength: 40 }), { seed: seed + 1, numRuns: 500 });
  const garbage = fc.sample(fc.uint8Array({ maxLength: 300 }), { seed: seed + 2, numRuns: 500 });

  const families: [string, number, () => FuzzCase][] = [
    ['invalid-json', 12, () => {
      const variants = [
        () => Buffer.from(garbage[int(0, garbage.length - 1)]!),
        () => Buffer.from(JSON.stringify(validPod()).slice(0, int(1, 60))),
        () => Buffer.from(pick(['{', '[', '{"a":}', 'nul', 'NaN', '{"a":1,}', "{'a':1}", '\u0000', '"\\ud800"x', '{"a":1}{"b":2}'])),
        () => Buffer.from(pick(unicode)),
      ];
      const body = pick(variants)();
      // An empty body, or one that happens to be valid JSON, is a 400 for its shape instead.
      return { family: 'invalid-json', method: 'POST', path: pick(JSON_PATHS), body, expect: [400] };
    }],
    ['wrong-types', 14, () => {
      const v = pick(jsonValues);
      const path = pick(JSON_PATHS);
      const shapes = [
        v,
        { Pod: v, NodeNames: pick([v, ['busy'], null]) },
        { Pod: validPod(), NodeNames: v },
        { Pod: validPod(), Nodes: v },
        { Pod: { metadata: v, spec: pick([v, { containers: v }, { initContainers: [v] }]) }, NodeNames: ['busy'] },
        review('wt', v),
        { apiVersion: ADMISSION, kind: 'AdmissionReview', request: v },
        { apiVersion: ADMISSION, kind: 'AdmissionReview', request: { uid: v, operation: v, object: validPod() } },
        review('wt2', { metadata: v, spec: v, status: v }, { operation: pick(['CREATE', v]), dryRun: v, subResource: v }),
      ];
      return { family: 'wrong-types', method: 'POST', path, body: json(pick(shapes)), expect: [200, 400] };
    }],
    ['deep-nesting', 6, () => {
      const depth = pick([101, 150, 1_000, 6_000, 10_000, 50_000, 100_000]);
      const inner = nestedText(depth, pick(['array', 'object'] as const));
      const bodies = [
        inner,
        `{"Pod":${JSON.stringify(validPod())},"Nodes":{"items":[{"metadata":{"name":"busy"},"spec":{"x":${inner}}}]}}`,
        `{"Pod":{"metadata":{"name":"p"},"spec":${inner}},"NodeNames":["busy"]}`,
        `{"apiVersion":${inner},"kind":"AdmissionReview","request":{"uid":"d"}}`,
        JSON.stringify(review('deep', validPod())).replace('"requests":{', `"requests":{"x":${inner},`),
      ];
      return { family: 'deep-nesting', method: 'POST', path: pick(JSON_PATHS), body: Buffer.from(pick(bodies)), expect: [400] };
    }],
    ['nesting-within-bound', 4, () => {
      const inner = nestedText(int(2, 90), pick(['array', 'object'] as const));
      const path = pick([FILTER, PRIORITIZE]);
      const body = `{"Pod":${JSON.stringify(validPod())},"Nodes":{"items":[{"metadata":{"name":"busy"},"spec":{"x":${inner}},"status":{"allocatable":{"cpu":"4","memory":"8Gi"}}}]}}`;
      return { family: 'nesting-within-bound', method: 'POST', path, body: Buffer.from(body), expect: [200] };
    }],
    ['huge-arrays', 2, () => {
      const n = int(50_000, 250_000);
      const element = pick(['0', '"busy"', '{}', '[]', 'null']);
      const array = `[${Array(n).fill(element).join(',')}]`;
      const bodies = [
        { text: `{"Pod":${JSON.stringify(validPod())},"NodeNames":${array}}`, path: pick([FILTER, PRIORITIZE]) },
        { text: `{"Pod":{"spec":{"containers":${array}}},"NodeNames":["busy"]}`, path: pick([FILTER, PRIORITIZE]) },
        { text: JSON.stringify(review('arr', validPod())).replace('"containers":[', `"volumes":${array},"containers":[`), path: WEBHOOK },
        { text: array, path: pick(JSON_PATHS) },
      ];
      const b = pick(bodies);
      return { family: 'huge-arrays', method: 'POST', path: b.path, body: Buffer.from(b.text), expect: [200, 400] };
    }],
    ['unicode', 10, () => {
      const s = () => pick(unicode);
      const shapes: [string, unknown][] = [
        [FILTER, { Pod: { metadata: { name: s(), namespace: s(), labels: { [s()]: s() } }, spec: { containers: [] } }, NodeNames: [s(), 'busy', s()] }],
        [PRIORITIZE, { Pod: validPod(), NodeNames: Array.from({ length: int(1, 20) }, s) }],
        [WEBHOOK, review(s() || 'u', { ...validPod(), metadata: { name: s(), namespace: s(), annotations: { [s()]: s() }, labels: { [s()]: s() } } })],
        [WEBHOOK, review('uni', validPod(s(), s()))],
      ];
      const [path, body] = pick(shapes);
      return { family: 'unicode', method: 'POST', path, body: json(body), expect: [200, 400] };
    }],
    ['proto-keys', 8, () => {
      const key = pick(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf']);
      const texts: [string, string][] = [
        [FILTER, `{"${key}":{"Pod":{},"NodeNames":["busy"]},"Pod":${JSON.stringify(validPod())},"NodeNames":["busy","idle"]}`],
        [PRIORITIZE, `{"Pod":{"metadata":{"${key}":{"name":"x"}},"spec":{"containers":[{"resources":{"requests":{"${key}":"1","cpu":"1"}}}]}},"NodeNames":["busy"]}`],
        [PRIORITIZE, `{"Pod":${JSON.stringify(validPod())},"Nodes":{"${key}":{"items":[]},"items":[{"metadata":{"name":"n","${key}":{}},"status":{"allocatable":{"${key}":"1","cpu":"2"}}}]}}`],
        [WEBHOOK, JSON.stringify(review('proto', validPod())).replace('"metadata":{', `"metadata":{"annotations":{"${key}":"x"},"labels":{"${key}":"y"},`)],
        [WEBHOOK, `{"${key}":{"apiVersion":"${ADMISSION}"},"apiVersion":"${ADMISSION}","kind":"AdmissionReview","request":{"uid":"p","${key}":{"operation":"CREATE"}}}`],
        [FILTER, `{"${key}":1,"constructor":{"prototype":{"polluted":true}}}`],
      ];
      const [path, text] = pick(texts);
      return { family: 'proto-keys', method: 'POST', path, body: Buffer.from(text), expect: [200, 400] };
    }],
    ['quantities', 14, () => {
      const q = pick<unknown>(['-1', '-1000000', '-0.5', '-1Gi', '-0', 'NaN', 'Infinity', '-Infinity', '1e999', '1e308Ei', '12Qi', '', ' ', '1 Gi', '--1', '0x10', '1_000',
        -5, 0, 1e308, [], {}, true, null, '500m', '4Gi', '9999999999999999999999', '1e-9', '.5', '5.', '+3']);
      const where = int(0, 3);
      if (where === 0) return { family: 'quantities', method: 'POST', path: PRIORITIZE, body: json({ Pod: validPod(q, pick([q, '1Gi'])), NodeNames: NODE_NAMES }), expect: [200, 400] };
      if (where === 1) {
        const nodes = { items: [{ metadata: { name: 'n1' }, status: { allocatable: { cpu: q, memory: pick([q, '8Gi']) } } }] };
        return { family: 'quantities', method: 'POST', path: pick([FILTER, PRIORITIZE]), body: json({ Pod: validPod(), Nodes: nodes }), expect: [200, 400] };
      }
      if (where === 2) return { family: 'quantities', method: 'POST', path: FILTER, body: json({ Pod: validPod(q), NodeNames: ['draining'] }), expect: [200, 400] };
      // The webhook fails open: whatever the quantities, the review is allowed (200).
      return { family: 'quantities', method: 'POST', path: WEBHOOK, body: json(review(`q${int(0, 1e9)}`, validPod(q, q, { spec: { containers: [{ name: 'c', resources: { limits: { cpu: q } } }], overhead: { cpu: q } } }))), expect: [200] };
    }],
    ['wrong-api-version', 8, () => {
      const apiVersion = pick<unknown>(['admission.k8s.io/v1beta1', 'admission.k8s.io/v2', 'v1', '', 'ADMISSION.K8S.IO/V1', null, 1, [], {}, ['admission.k8s.io/v1'], 'x'.repeat(100_000)]);
      const kind = pick<unknown>(['AdmissionReview', 'Pod', '', null, 'admissionreview']);
      const body = { apiVersion, kind, request: { uid: 'v', operation: 'CREATE', object: validPod() } };
      return { family: 'wrong-api-version', method: 'POST', path: WEBHOOK, body: json(body), expect: [400] };
    }],
    ['oversized', 1, () => {
      const path = pick(JSON_PATHS);
      const limit = path === WEBHOOK ? WEBHOOK_LIMIT : EXTENDER_LIMIT;
      const variant = int(0, 2);
      // Whole body a little over the limit; chunked without a length; a huge declared length, barely sent.
      if (variant === 0) return { family: 'oversized', method: 'POST', path, body: { streamBytes: limit + int(1, 2_000_000), chunked: false }, expect: [413] };
      if (variant === 1) return { family: 'oversized', method: 'POST', path, body: { streamBytes: limit + int(1, 2_000_000), chunked: true }, expect: [413] };
      return { family: 'oversized', method: 'POST', path, body: { streamBytes: 64 * 1024, chunked: false, declaredBytes: 1024 ** 3 }, expect: [413] };
    }],
    ['node-names-10k', 2, () => {
      const names = Array.from({ length: 10_000 }, (_, i) => (i % 3 === 0 ? NODE_NAMES[i % NODE_NAMES.length]! : `node-${i}-${'x'.repeat(int(0, 12))}`));
      return { family: 'node-names-10k', method: 'POST', path: pick([FILTER, PRIORITIZE]), body: json({ Pod: validPod(), NodeNames: names }), expect: [200] };
    }],
    ['label-values', 6, () => {
      const op = pick<unknown>([`OP-${int(0, 1e9)}`, 'CREATE', 'UPDATE', 'DELETE', 'CONNECT', pick(unicode), 7, null]);
      return { family: 'label-values', method: 'POST', path: WEBHOOK, body: json(review(`l${int(0, 1e9)}`, validPod(), { operation: op })), expect: [200] };
    }],
    ['methods-and-paths', 5, () => {
      const method = pick(['GET', 'PUT', 'DELETE', 'PATCH', 'POST', 'OPTIONS']);
      const path = pick([...JSON_PATHS, '/', `/${Buffer.from(pick(unicode)).toString('hex')}`, '/scheduler', `/mutate/pods/${int(0, 99)}`, '/healthz/x', `/x?${'a='.repeat(200)}`]);
      const expect = (JSON_PATHS as readonly string[]).includes(path) ? (method === 'POST' ? [400] : [405]) : [404];
      return { family: 'methods-and-paths', method, path, expect };
    }],
    ['valid', 8, () => {
      const shapes: [string, unknown][] = [
        [WEBHOOK, review(`ok${int(0, 1e9)}`, validPod(pick(['100m', '1', '250m']), pick(['128Mi', '1Gi'])))],
        [FILTER, { Pod: validPod(), NodeNames: NODE_NAMES }],
        [PRIORITIZE, { Pod: validPod(), NodeNames: NODE_NAMES }],
        [PRIORITIZE, { Pod: validPod(), Nodes: { items: [{ metadata: { name: 'new' }, status: { allocatable: { cpu: '8', memory: '16Gi' } } }] } }],
      ];
      const [path, body] = pick(shapes);
      return { family: 'valid', method: 'POST', path, body: json(body), expect: [200] };
    }],
  ];
  const wheel: (() => FuzzCase)[] = [];
  for (const [, weight, make] of families) for (let i = 0; i < weight; i++) wheel.push(make);
  for (let i = 0; i < count; i++) yield wheel[i % wheel.length]!();
}

/** Every family name, for the report. */
export const FAMILIES = ['invalid-json', 'wrong-types', 'deep-nesting', 'nesting-within-bound', 'huge-arrays', 'unicode', 'proto-keys', 'quantities',
  'wrong-api-version', 'oversized', 'node-names-10k', 'label-values', 'methods-and-paths', 'valid'];
