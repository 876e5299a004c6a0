import {
  CelScalar, celEnv, celFunc, celMethod, isCelError, isCelMap, mapType, parse, plan, type CelMap, type CelValue,
} from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import type { Device, DeviceAttribute } from './device.js';
import { DraQuantityError, parseNanoQuantity } from './quantity.js';

/**
 * DRA's CEL device selectors (resource.k8s.io/v1 CELDeviceSelector), evaluated with
 * @bufbuild/cel. The environment is the one kube-scheduler gives a selector, as far as
 * Headroom models it: `device.driver`, `device.attributes[domain].name` (int, bool,
 * string, version), `device.capacity[domain].name` (Quantity), an unknown domain being
 * an empty map; the standard library, the strings extension, and Kubernetes'
 * `quantity()` / `isQuantity()` and `semver()` / `isSemver()` with their comparison
 * methods. Quantities and versions are CEL maps with one marker key here, so `==`
 * compares them by value. An expression that calls anything else cannot be modelled.
 */

const Q = '$quantity';
const V = '$semver';
const MAP = mapType(CelScalar.STRING, CelScalar.DYN);

type SemVer = [bigint, bigint, bigint, string];
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

function quantityValue(n: bigint): Map<string, bigint> {
  return new Map([[Q, n]]);
}

function semverValue(s: string): Map<string, string> {
  const m = SEMVER.exec(s);
  if (!m) throw new Error(`invalid semantic version ${JSON.stringify(s)}`);
  // Normalized (build metadata dropped) so that == compares versions, not spellings.
  return new Map([[V, `${m[1]}.${m[2]}.${m[3]}${m[4] ? `-${m[4]}` : ''}`]]);
}

function asQuantity(v: CelMap): bigint {
  const q = v.get(Q);
  if (typeof q !== 'bigint') throw new Error('not a quantity');
  return q;
}

function asSemver(v: CelMap): SemVer {
  const s = v.get(V);
  if (typeof s !== 'string') throw new Error('not a semantic version');
  const m = SEMVER.exec(s)!;
  return [BigInt(m[1]!), BigInt(m[2]!), BigInt(m[3]!), m[4] ?? ''];
}

function comparePrerelease(a: string, b: string): number {
  if (a === b) return 0;
  if (!a) return 1;
  if (!b) return -1;
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) { const d = Number(x) - Number(y); if (d) return Math.sign(d); continue; }
    if (nx !== ny) return nx ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function compare(a: CelMap, b: CelMap): bigint {
  if (a.has(Q) && b.has(Q)) {
    const x = asQuantity(a);
    const y = asQuantity(b);
    return x < y ? -1n : x > y ? 1n : 0n;
  }
  const x = asSemver(a);
  const y = asSemver(b);
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] as bigint) < (y[i] as bigint) ? -1n : 1n;
  return BigInt(comparePrerelease(x[3], y[3]));
}

const FUNCS = [
  ...strings,
  celFunc('quantity', [CelScalar.STRING], MAP, (s) => quantityValue(parseNanoQuantity(s))),
  celFunc('isQuantity', [CelScalar.STRING], CelScalar.BOOL, (s) => {
    try { parseNanoQuantity(s); return true; } catch (err) { if (err instanceof DraQuantityError) return false; throw err; }
  }),
  celFunc('semver', [CelScalar.STRING], MAP, (s) => semverValue(s)),
  celFunc('isSemver', [CelScalar.STRING], CelScalar.BOOL, (s) => SEMVER.test(s)),
  celMethod('compareTo', MAP, [MAP], CelScalar.INT, function (o) { return compare(this, o); }),
  celMethod('isGreaterThan', MAP, [MAP], CelScalar.BOOL, function (o) { return compare(this, o) > 0n; }),
  celMethod('isLessThan', MAP, [MAP], CelScalar.BOOL, function (o) { return compare(this, o) < 0n; }),
  celMethod('add', MAP, [MAP], MAP, function (o) { return quantityValue(asQuantity(this) + asQuantity(o)); }),
  celMethod('add', MAP, [CelScalar.INT], MAP, function (o) { return quantityValue(asQuantity(this) + o * 1_000_000_000n); }),
  celMethod('sub', MAP, [MAP], MAP, function (o) { return quantityValue(asQuantity(this) - asQuantity(o)); }),
  celMethod('sub', MAP, [CelScalar.INT], MAP, function (o) { return quantityValue(asQuantity(this) - o * 1_000_000_000n); }),
  celMethod('sign', MAP, [], CelScalar.INT, function () { const q = asQuantity(this); return q < 0n ? -1n : q > 0n ? 1n : 0n; }),
  celMethod('isInteger', MAP, [], CelScalar.BOOL, function () { return asQuantity(this) % 1_000_000_000n === 0n; }),
  celMethod('asInteger', MAP, [], CelScalar.INT, function () {
    const q = asQuantity(this);
    if (q % 1_000_000_000n !== 0n) throw new Error('quantity is not an integer');
    return q / 1_000_000_000n;
  }),
  celMethod('asApproximateFloat', MAP, [], CelScalar.DOUBLE, function () { return Number(asQuantity(this)) / 1e9; }),
  celMethod('major', MAP, [], CelScalar.INT, function () { return asSemver(this)[0]; }),
  celMethod('minor', MAP, [], CelScalar.INT, function () { return asSemver(this)[1]; }),
  celMethod('patch', MAP, [], CelScalar.INT, function () { return asSemver(this)[2]; }),
];

const ENV = celEnv({ funcs: FUNCS, variables: { device: MAP } });

/** A device's verdict under a selector: a match, no match, or an evaluation error (as kube-scheduler's allocator sees it). */
export type SelectorVerdict = true | false | { error: string };

export interface CompiledSelector {
  expression: string;
  /** Domains the expression names as string literals: they read as empty maps when a device has none. */
  domains: string[];
  evaluate(device: Device): SelectorVerdict;
}

/**
 * Errors that mean "Headroom's CEL environment lacks this", not "the device does not fit".
 * An unresolved attribute is a name kube-apiserver's environment has and ours lacks (a
 * library namespace such as `sets.`): the API server rejects selectors naming anything else.
 */
const UNSUPPORTED = /^(unbound function|found no matching overload|unresolved attribute|unsupported)/;

/** Why Headroom cannot model an expression, or undefined; see compileSelector. */
export class UnmodelableSelector extends Error {}

function attributeCel(v: DeviceAttribute): unknown {
  return typeof v === 'object' ? semverValue(v.version) : v;
}

function deviceInput(d: Device, domains: readonly string[]): Record<string, unknown> {
  const attributes = new Map<string, Map<string, unknown>>();
  for (const [domain, attrs] of Object.entries(d.attributes)) {
    attributes.set(domain, new Map(Object.entries(attrs).map(([k, v]) => [k, attributeCel(v)])));
  }
  const capacity = new Map<string, Map<string, unknown>>();
  for (const [domain, caps] of Object.entries(d.capacity)) {
    capacity.set(domain, new Map(Object.entries(caps).map(([k, v]) => [k, quantityValue(v)])));
  }
  for (const domain of domains) {
    if (!attributes.has(domain)) attributes.set(domain, new Map());
    if (!capacity.has(domain)) capacity.set(domain, new Map());
  }
  return { driver: d.driver, attributes, capacity };
}

/**
 * Compiles a selector. Throws UnmodelableSelector when it does not parse. An
 * evaluation that needs a function or overload Headroom's environment lacks reports
 * `{ error }` prefixed "unsupported:"; other errors (a missing attribute) are the
 * device's verdict, as kube-scheduler aborts allocation on them.
 */
export function compileSelector(expression: string): CompiledSelector {
  let run: (ctx: { device: Record<string, unknown> }) => unknown;
  try {
    run = plan(ENV, parse(expression)) as unknown as typeof run;
  } catch (err) {
    throw new UnmodelableSelector(`CEL expression ${JSON.stringify(expression)} does not parse: ${(err as Error).message}`);
  }
  const domains = [...expression.matchAll(/"([^"\\]*)"|'([^'\\]*)'/g)].map((m) => m[1] ?? m[2] ?? '').filter((s) => s.length > 0);
  return {
    expression,
    domains,
    evaluate(device: Device): SelectorVerdict {
      let r: unknown;
      try {
        r = run({ device: deviceInput(device, domains) });
      } catch (err) {
        return { error: (err as Error).message };
      }
      if (isCelError(r)) {
        const msg = (r as { message: string }).message;
        return { error: UNSUPPORTED.test(msg) ? `unsupported: ${msg}` : msg };
      }
      if (typeof r === 'boolean') return r;
      return { error: `expression evaluated to ${isCelMap(r as CelValue) ? 'a map' : typeof r}, not a bool` };
    },
  };
}
