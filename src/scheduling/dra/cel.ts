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
  /**
   * All the expression reads of a device, when that is known: `driver` for `device.driver`,
   * and JSON `["attributes" | "capacity", domain, name]` for the named entries
   * `device.attributes["domain"].name` / `device.capacity["domain"].name`. Devices equal
   * on these (see deviceReadKey) get the same verdict.
   * Undefined when the expression uses the device otherwise (a whole map, a comprehension).
   */
  reads?: string[];
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

/** A device's attributes and capacity as CEL maps, converted once per device (CEL does not change its input). */
const converted = new WeakMap<Device, { attributes: Map<string, Map<string, unknown>>; capacity: Map<string, Map<string, unknown>> }>();

function convert(d: Device): { attributes: Map<string, Map<string, unknown>>; capacity: Map<string, Map<string, unknown>> } {
  let c = converted.get(d);
  if (!c) {
    const attributes = new Map<string, Map<string, unknown>>();
    for (const [domain, attrs] of Object.entries(d.attributes)) {
      attributes.set(domain, new Map(Object.entries(attrs).map(([k, v]) => [k, attributeCel(v)])));
    }
    const capacity = new Map<string, Map<string, unknown>>();
    for (const [domain, caps] of Object.entries(d.capacity)) {
      capacity.set(domain, new Map(Object.entries(caps).map(([k, v]) => [k, quantityValue(v)])));
    }
    c = { attributes, capacity };
    converted.set(d, c);
  }
  return c;
}

const EMPTY_DOMAIN: ReadonlyMap<string, unknown> = new Map();

/** The device as a selector naming `domains` reads it: a domain it lacks is an empty map. */
function deviceInput(d: Device, domains: readonly string[]): Record<string, unknown> {
  const base = convert(d);
  let attributes = base.attributes;
  let capacity = base.capacity;
  for (const domain of domains) {
    if (!attributes.has(domain)) {
      if (attributes === base.attributes) attributes = new Map(attributes);
      attributes.set(domain, EMPTY_DOMAIN as Map<string, unknown>);
    }
    if (!capacity.has(domain)) {
      if (capacity === base.capacity) capacity = new Map(capacity);
      capacity.set(domain, EMPTY_DOMAIN as Map<string, unknown>);
    }
  }
  return { driver: d.driver, attributes, capacity };
}

type Node = { exprKind?: { case?: string; value?: Record<string, unknown> } };

const kindOf = (e: unknown) => (e as Node | undefined)?.exprKind?.case;
const valueOf = (e: unknown) => (e as Node).exprKind!.value as Record<string, unknown>;
const isDeviceIdent = (e: unknown) => kindOf(e) === 'identExpr' && valueOf(e).name === 'device';
function stringConst(e: unknown): string | undefined {
  if (kindOf(e) !== 'constExpr') return undefined;
  const c = valueOf(e).constantKind as { case?: string; value?: unknown } | undefined;
  return c?.case === 'stringValue' && typeof c.value === 'string' ? c.value : undefined;
}
/** `device.attributes["d"]` or `device.capacity["d"]` -> `["attributes","d"]` (JSON), else undefined. */
function domainAccess(e: unknown): string | undefined {
  if (kindOf(e) !== 'callExpr') return undefined;
  const c = valueOf(e);
  const args = c.args as unknown[];
  if (c.function !== '_[_]' || c.target || args.length !== 2) return undefined;
  if (kindOf(args[0]) !== 'selectExpr') return undefined;
  const sel = valueOf(args[0]);
  if (!isDeviceIdent(sel.operand) || sel.testOnly || (sel.field !== 'attributes' && sel.field !== 'capacity')) return undefined;
  const domain = stringConst(args[1]);
  return domain === undefined ? undefined : JSON.stringify([sel.field, domain]);
}

/** A named entry read, as JSON `[kind, domain, name]`. */
const read = (domain: string, name: string) => `${domain.slice(0, -1)},${JSON.stringify(name)}]`;

/**
 * What of the device a parsed expression reads (see CompiledSelector.reads), or
 * undefined when it reads more than named entries. Conservative: any use of `device`
 * outside the recognised forms, or a comprehension variable named `device`, gives up.
 */
function deviceReads(root: unknown): string[] | undefined {
  const reads = new Set<string>();
  const walk = (e: unknown): boolean => {
    const kind = kindOf(e);
    if (kind === undefined || kind === 'constExpr') return true;
    const v = valueOf(e);
    switch (kind) {
      case 'identExpr':
        return v.name !== 'device';
      case 'selectExpr': {
        if (isDeviceIdent(v.operand)) {
          if (v.field === 'driver' && !v.testOnly) { reads.add('driver'); return true; }
          return false;
        }
        const dom = domainAccess(v.operand);
        if (dom !== undefined) { reads.add(read(dom, v.field as string)); return true; }
        return walk(v.operand);
      }
      case 'callExpr': {
        const args = v.args as unknown[];
        if (v.function === '_[_]' && !v.target && args.length === 2) {
          const dom = domainAccess(args[0]);
          const name = stringConst(args[1]);
          if (dom !== undefined && name !== undefined) { reads.add(read(dom, name)); return true; }
        }
        if (v.function === '@in' && !v.target && args.length === 2) {
          const dom = domainAccess(args[1]);
          const name = stringConst(args[0]);
          if (dom !== undefined && name !== undefined) { reads.add(read(dom, name)); return true; }
        }
        if (domainAccess(e) !== undefined) return false;
        if (v.target !== undefined && !walk(v.target)) return false;
        return args.every(walk);
      }
      case 'listExpr':
        return (v.elements as unknown[]).every(walk);
      case 'structExpr':
        return (v.entries as Array<{ keyKind?: { case?: string; value?: unknown }; value?: unknown }>)
          .every((en) => (en.keyKind?.case !== 'mapKey' || walk(en.keyKind.value)) && walk(en.value));
      case 'comprehensionExpr':
        if (v.iterVar === 'device' || v.iterVar2 === 'device' || v.accuVar === 'device') return false;
        return ['iterRange', 'accuInit', 'loopCondition', 'loopStep', 'result'].every((k) => walk(v[k]));
      default:
        return false;
    }
  };
  return walk(root) ? [...reads].sort() : undefined;
}

/** A key equal for devices equal on what `reads` (CompiledSelector.reads) names: they get the same verdicts. */
export function deviceReadKey(d: Device, reads: readonly string[]): string {
  const parts: unknown[] = [];
  for (const r of reads) {
    if (r === 'driver') { parts.push(d.driver); continue; }
    let parsed = parsedReads.get(r);
    if (!parsed) { parsed = JSON.parse(r) as ['attributes' | 'capacity', string, string]; parsedReads.set(r, parsed); }
    const [kind, domain, name] = parsed;
    const map = (kind === 'attributes' ? d.attributes : d.capacity)[domain];
    // Absent domain, absent entry, or the value (Object.hasOwn: names are the driver's strings).
    parts.push(map === undefined ? 0 : Object.hasOwn(map, name) ? [map[name]] : 1);
  }
  return JSON.stringify(parts, (_k, v: unknown) => (typeof v === 'bigint' ? { int: String(v) } : v));
}
const parsedReads = new Map<string, ['attributes' | 'capacity', string, string]>();

/**
 * Compiles a selector. Throws UnmodelableSelector when it does not parse. An
 * evaluation that needs a function or overload Headroom's environment lacks reports
 * `{ error }` prefixed "unsupported:"; other errors (a missing attribute) are the
 * device's verdict, as kube-scheduler aborts allocation on them.
 */
export function compileSelector(expression: string): CompiledSelector {
  let run: (ctx: { device: Record<string, unknown> }) => unknown;
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expression);
    run = plan(ENV, parsed) as unknown as typeof run;
  } catch (err) {
    throw new UnmodelableSelector(`CEL expression ${JSON.stringify(expression)} does not parse: ${(err as Error).message}`);
  }
  const domains = [...expression.matchAll(/"([^"\\]*)"|'([^'\\]*)'/g)].map((m) => m[1] ?? m[2] ?? '').filter((s) => s.length > 0);
  const reads = deviceReads(parsed.expr);
  return {
    expression,
    domains,
    ...(reads ? { reads } : {}),
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
