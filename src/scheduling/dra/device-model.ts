import { compileSelector, deviceReadKey, UnmodelableSelector, type CompiledSelector, type SelectorVerdict } from './cel.js';
import type { DeviceRequest } from './claim.js';
import { deviceId, deviceShapeKey, type Device } from './device.js';
import { DEVICE_RESOURCE_PREFIX, type DraTable } from './pod-devices.js';

/** A DeviceClass as the model reads it: its selectors, or why they cannot be read. */
export type DeviceClassModel = { selectors: string[] } | { unmodeled: string };

interface Signature {
  id: string;
  className: string;
  selectors: CompiledSelector[];
  describe: string;
  /** Set once a device's evaluation needed something Headroom's CEL lacks. */
  unmodeled?: string;
}

/** A node's (or template's) free devices as resources, and the signatures whose selectors failed on one of its devices. */
export interface DeviceCapacity {
  resources: Record<string, number>;
  /** kube-scheduler aborts allocation on a selector error: pods needing these signatures cannot run here. */
  blocked: string[];
}

/**
 * The device model of one snapshot: the signatures the pods' requests use (a
 * DeviceClass's selectors plus the request's), then each device evaluated against
 * every signature, memoized by what the selectors read of a device (else its whole shape: nodes of one kind publish identical
 * devices). Requests first (signature), devices after (capacity), then table().
 */
export class DeviceModel {
  private readonly sigs: Signature[] = [];
  private readonly byKey = new Map<string, Signature>();
  private readonly compiled = new Map<string, CompiledSelector | UnmodelableSelector>();
  private readonly verdicts = new Map<string, { atom: string | undefined; blocked: string[] }>();
  private readonly atomSigs = new Map<string, string[]>();
  private sealed = false;
  /** What the signatures' selectors read of a device (undefined: one reads more than named entries); made when sealed. */
  private reads: string[] | undefined | null = null;

  constructor(private readonly classes: ReadonlyMap<string, DeviceClassModel>) {}

  private compile(expr: string): CompiledSelector {
    let c = this.compiled.get(expr);
    if (!c) {
      try { c = compileSelector(expr); } catch (err) { if (!(err instanceof UnmodelableSelector)) throw err; c = err; }
      this.compiled.set(expr, c);
    }
    if (c instanceof UnmodelableSelector) throw c;
    return c;
  }

  /** The signature id of a request, or why it cannot be modelled. */
  signature(req: DeviceRequest): { id: string } | { unmodeled: string } {
    if (this.sealed) throw new Error('DeviceModel: signature() after capacity()');
    const cls = this.classes.get(req.deviceClassName);
    if (!cls) return { unmodeled: `DeviceClass ${req.deviceClassName} not found` };
    if ('unmodeled' in cls) return { unmodeled: `DeviceClass ${req.deviceClassName}: ${cls.unmodeled}` };
    const key = JSON.stringify([req.deviceClassName, cls.selectors, req.selectors]);
    let sig = this.byKey.get(key);
    if (!sig) {
      let selectors: CompiledSelector[];
      try {
        selectors = [...cls.selectors, ...req.selectors].map((e) => this.compile(e));
      } catch (err) {
        if (err instanceof UnmodelableSelector) return { unmodeled: err.message };
        throw err;
      }
      const n = req.selectors.length;
      sig = { id: `s${this.sigs.length}`, className: req.deviceClassName, selectors, describe: `class ${req.deviceClassName}${n ? `, ${n} selector${n > 1 ? 's' : ''}` : ''}` };
      this.sigs.push(sig);
      this.byKey.set(key, sig);
    }
    return { id: sig.id };
  }

  get empty(): boolean {
    return this.sigs.length === 0;
  }

  private verdict(sig: Signature, d: Device): SelectorVerdict {
    for (const s of sig.selectors) {
      const v = s.evaluate(d);
      if (v !== true) return v;
    }
    return true;
  }

  /**
   * Verdicts are memoized per device key: what the selectors read of the device when
   * they all say (devices with unique uuids still share verdicts), else its whole shape.
   */
  private deviceKey(d: Device): string {
    if (this.reads === null) {
      const all = new Set<string>();
      let known = true;
      for (const sig of this.sigs) for (const s of sig.selectors) { if (s.reads) for (const r of s.reads) all.add(r); else known = false; }
      this.reads = known ? [...all].sort() : undefined;
    }
    return this.reads ? deviceReadKey(d, this.reads) : deviceShapeKey(d);
  }

  private classify(d: Device): { atom: string | undefined; blocked: string[] } {
    const key = this.deviceKey(d);
    let hit = this.verdicts.get(key);
    if (hit) return hit;
    const matched: number[] = [];
    const blocked: string[] = [];
    for (let i = 0; i < this.sigs.length; i++) {
      const sig = this.sigs[i]!;
      const v = this.verdict(sig, d);
      if (v === true) matched.push(i);
      else if (v !== false) {
        if (v.error.startsWith('unsupported: ')) sig.unmodeled ??= `CEL selector of ${sig.describe}: ${v.error.slice('unsupported: '.length)}`;
        else blocked.push(sig.id);
      }
    }
    const atom = matched.length ? `${DEVICE_RESOURCE_PREFIX}${matched.join('.')}` : undefined;
    if (atom && !this.atomSigs.has(atom)) this.atomSigs.set(atom, matched.map((i) => this.sigs[i]!.id));
    hit = { atom, blocked };
    this.verdicts.set(key, hit);
    return hit;
  }

  /** Free devices (those not in `allocated`) counted per atom. */
  capacity(devices: readonly Device[], allocated: ReadonlySet<string>): DeviceCapacity {
    this.sealed = true;
    const resources: Record<string, number> = {};
    const blocked = new Set<string>();
    if (this.sigs.length === 0) return { resources, blocked: [] };
    for (const d of devices) {
      const { atom, blocked: b } = this.classify(d);
      for (const s of b) blocked.add(s);
      if (atom && !allocated.has(deviceId(d))) resources[atom] = (resources[atom] ?? 0) + 1;
    }
    return { resources, blocked: [...blocked].sort() };
  }

  /** Why a signature cannot be modelled after all (its CEL needed a function Headroom lacks), else undefined. */
  unmodeled(id: string): string | undefined {
    return this.sigs[Number(id.slice(1))]?.unmodeled;
  }

  table(): DraTable {
    const atomsOf: Record<string, string[]> = {};
    const describe: Record<string, string> = {};
    for (const s of this.sigs) { atomsOf[s.id] = []; describe[s.id] = s.describe; }
    const atoms = [...this.atomSigs].sort((a, b) => a[1].length - b[1].length || (a[0] < b[0] ? -1 : 1));
    for (const [atom, sigs] of atoms) for (const s of sigs) atomsOf[s]!.push(atom);
    return { atomsOf, describe };
  }
}
