import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { NodePoolError } from '../../../src/api/nodepool.js';
import { ObjectValidationError } from '../../../src/api/validation-error.js';
import { buildSnapshot } from '../../../src/cluster/build-snapshot.js';
import { LoadError, loadObjects, parseObjects } from '../../../src/cluster/load-objects.js';

/**
 * Bad input must fail as one validation error naming the object and field, never
 * as a TypeError from deep inside: replace one random field of the example clusters
 * with a value of the wrong type, many times (seeded, so failures reproduce).
 */
describe('robustness of the capacity model against malformed objects', () => {
  const base: KubernetesObject[] = ['example-cluster.yaml', 'gpu-cluster.yaml', 'scale-from-zero.yaml']
    .flatMap((f) => parseObjects(readFileSync(new URL(`../../fixtures/${f}`, import.meta.url), 'utf8'), f));
  const garbage: unknown[] = [null, 1, -5, 'x', '12Qi', true, [], [1], {}, { a: 1 }];

  function fieldPaths(o: unknown, prefix: string[] = [], out: string[][] = []): string[][] {
    if (o && typeof o === 'object') {
      for (const k of Object.keys(o)) {
        out.push([...prefix, k]);
        fieldPaths((o as Record<string, unknown>)[k], [...prefix, k], out);
      }
    }
    return out;
  }

  it('only ever throws ObjectValidationError, NodePoolError or LoadError (strict), and never throws when lenient', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor((seed / 2 ** 31) * n);
    };
    const crashes: string[] = [];
    let rejected = 0;
    for (let i = 0; i < 250; i++) {
      const objects = structuredClone(base) as unknown as Array<Record<string, unknown>>;
      const target = objects[rnd(objects.length)]!;
      const paths = fieldPaths(target);
      const path = paths[rnd(paths.length)]!;
      let parent: Record<string, unknown> = target;
      for (const k of path.slice(0, -1)) parent = parent[k] as Record<string, unknown>;
      parent[path[path.length - 1]!] = garbage[rnd(garbage.length)];
      const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects });
      const where = `${String(target.kind)} ${path.join('.')}`;
      try {
        buildSnapshot(loadObjects(text));
      } catch (err) {
        if (err instanceof ObjectValidationError || err instanceof NodePoolError || err instanceof LoadError) {
          expect((err as Error).message, where).to.not.include('\n');
          rejected++;
        } else {
          crashes.push(`${where}: ${(err as Error).message}`);
        }
      }
      try {
        buildSnapshot(loadObjects(text), { strict: false });
      } catch (err) {
        if (!(err instanceof LoadError)) crashes.push(`lenient ${where}: ${(err as Error).message}`);
      }
    }
    expect(crashes).to.deep.equal([]);
    expect(rejected).to.be.greaterThan(20); // the mutations do hit validated fields
  });
});
