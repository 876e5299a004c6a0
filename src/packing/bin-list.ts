import { CPU, MEMORY, PODS } from '../scheduling/resources.js';
import type { Bin } from './bins.js';
import type { PodClass } from './pod-classes.js';

/**
 * The bins the cost-aware packer may still fill, in the order it visits them, with
 * each bin's free CPU, memory and pods and the share it was opened for copied into
 * typed arrays. The packer passes over every open bin once or twice per class; with
 * thousands of classes and thousands of new nodes those passes dominate a solve, and
 * reading a few contiguous numbers per bin costs a fraction of reading each bin's
 * objects. The copies are kept current by `refresh` after every placement; they
 * decide nothing on their own: `cannotFit` is exactly fitCount's answer of 0 for
 * those three resources, so a bin it skips is one `allowance` would refuse.
 */
export class BinList {
  private readonly list: Bin[] = [];
  /** Per bin index (Bin.index): its slot in the list plus one, 0 when not in it. */
  private pos = new Int32Array(64);
  private cpu = new Float64Array(64);
  private mem = new Float64Array(64);
  private pods = new Float64Array(64);
  /** The share of the remaining demand each bin was opened for (its quota's base). */
  share = new Float64Array(64);

  constructor(bins: readonly Bin[] = []) {
    for (const b of bins) this.push(b);
  }

  get length(): number { return this.list.length; }

  get bins(): readonly Bin[] { return this.list; }

  at(i: number): Bin { return this.list[i]!; }

  push(bin: Bin): void {
    const i = this.list.length;
    if (i === this.cpu.length) this.grow();
    while (bin.index >= this.pos.length) { const p = new Int32Array(this.pos.length * 2); p.set(this.pos); this.pos = p; }
    this.list.push(bin);
    this.pos[bin.index] = i + 1;
    this.share[i] = bin.share;
    this.copy(i, bin);
  }

  /** Re-reads the bin's free room after pods were placed on it (no-op for a bin not in the list). */
  refresh(bin: Bin): void {
    const i = bin.index < this.pos.length ? this.pos[bin.index]! - 1 : -1;
    if (i >= 0 && this.list[i] === bin) this.copy(i, bin);
  }

  /**
   * Whether no pod of the class fits the i-th bin's free CPU, memory or pods: the
   * same division fitCount makes, for the same keys (those the class requests).
   */
  cannotFit(i: number, cls: PodClass): boolean {
    const r = cls.req;
    const c = r[CPU] ?? 0;
    if (c > 0 && this.cpu[i]! / c < 1) return true;
    const m = r[MEMORY] ?? 0;
    if (m > 0 && this.mem[i]! / m < 1) return true;
    const p = r[PODS] ?? 0;
    return p > 0 && this.pods[i]! / p < 1;
  }

  /** Whether the i-th bin's copied free room is below one pod, `cpu` or `memory`. */
  short(i: number, cpu: number, memory: number): boolean {
    return this.pods[i]! < 1 || this.cpu[i]! < cpu || this.mem[i]! < memory;
  }

  /** Keeps the bins `keep` (given each bin and its slot) accepts, in order; returns the others. */
  retain(keep: (b: Bin, i: number) => boolean): Bin[] {
    const dropped: Bin[] = [];
    const list = this.list;
    let j = 0;
    for (let i = 0; i < list.length; i++) {
      const b = list[i]!;
      if (!keep(b, i)) { dropped.push(b); this.pos[b.index] = 0; continue; }
      if (j !== i) {
        list[j] = b;
        this.pos[b.index] = j + 1;
        this.share[j] = this.share[i]!;
        this.cpu[j] = this.cpu[i]!;
        this.mem[j] = this.mem[i]!;
        this.pods[j] = this.pods[i]!;
      }
      j++;
    }
    list.length = j;
    return dropped;
  }

  private copy(i: number, bin: Bin): void {
    const f = bin.free;
    this.cpu[i] = f[CPU] ?? 0;
    this.mem[i] = f[MEMORY] ?? 0;
    this.pods[i] = f[PODS] ?? 0;
  }

  private grow(): void {
    const n = this.cpu.length * 2;
    const g = (a: Float64Array) => { const b = new Float64Array(n); b.set(a); return b; };
    this.cpu = g(this.cpu);
    this.mem = g(this.mem);
    this.pods = g(this.pods);
    this.share = g(this.share);
  }
}
