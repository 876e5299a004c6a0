import type { Distribution } from './trace.js';
import { Random } from './random.js';

/**
 * Draws from a distribution by index: the k-th draw is the same in every run with
 * the same seed and stream name, whatever order the simulation asks for them in.
 * That keeps the demand identical across policies (pod k of a Job always runs as
 * long), even though policies create and evict pods in different orders.
 */
export class Sampler {
  private readonly values: number[] = [];
  private readonly rng: Random;

  constructor(private readonly dist: Distribution, seed: number, stream: string) {
    this.rng = Random.stream(seed, stream);
  }

  get(k: number): number {
    while (this.values.length <= k) this.values.push(draw(this.dist, this.rng));
    return this.values[k]!;
  }
}

export function draw(d: Distribution, rng: Random): number {
  switch (d.kind) {
    case 'constant': return d.value;
    case 'uniform': return rng.uniform(d.min, d.max);
    case 'normal': return Math.min(d.max, Math.max(d.min, rng.normal(d.mean, d.stddev)));
  }
}
