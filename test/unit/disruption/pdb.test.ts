import { expect } from 'chai';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import { DEFAULT_DISRUPTION, DisruptionAllowance } from '../../../src/disruption/allowance.js';
import { PdbAllowance } from '../../../src/disruption/pdb.js';
import { group, node, pod, snapshot } from '../packing/snapshot-builders.js';

function pdb(name: string, app: string | null, allowed: number | undefined, namespace = 'default'): V1PodDisruptionBudget {
  return {
    metadata: { namespace, name },
    spec: { selector: app === null ? {} : { matchLabels: { app } }, maxUnavailable: 1 },
    ...(allowed === undefined ? {} : { status: { disruptionsAllowed: allowed, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 } }),
  };
}

const web = (name: string, namespace = 'default') => ({ ...pod(name, { cpu: '100m' }), namespace, labels: { app: 'web' } });

describe('PodDisruptionBudgets in the what-if', () => {
  it('a plan may evict up to status.disruptionsAllowed covered pods, summed over the pass', () => {
    const pdbs = new PdbAllowance([pdb('web', 'web', 2)]);
    expect(pdbs.blocked([web('a'), web('b')])).to.equal(undefined);
    expect(pdbs.blocked([web('a'), web('b'), web('c')])).to.equal('PodDisruptionBudget default/web allows 2 more disruption(s), the plan needs 3');
    pdbs.take([web('a')]);
    expect(pdbs.blocked([web('b')])).to.equal(undefined);
    expect(pdbs.blocked([web('b'), web('c')])).to.match(/allows 1 more/);
  });

  it('maxUnavailable 0 (disruptionsAllowed 0) and a PDB not yet reported on block; other namespaces and labels are not covered', () => {
    expect(new PdbAllowance([pdb('web', 'web', 0)]).blocked([web('a')])).to.match(/allows 0 more/);
    expect(new PdbAllowance([pdb('web', 'web', undefined)]).blocked([web('a')])).to.match(/allows 0 more/);
    expect(new PdbAllowance([pdb('web', 'web', 0, 'other')]).blocked([web('a')])).to.equal(undefined);
    expect(new PdbAllowance([pdb('db', 'db', 0)]).blocked([web('a')])).to.equal(undefined);
    // policy/v1: an empty selector covers every pod of its namespace, a missing one none.
    expect(new PdbAllowance([pdb('all', null, 0)]).blocked([web('a')])).to.match(/default\/all/);
    expect(new PdbAllowance([{ ...pdb('none', null, 0), spec: {} }]).blocked([web('a')])).to.equal(undefined);
  });

  it('DisruptionAllowance refuses a node whose moved pods a PDB protects, and counts what it takes', () => {
    const g = { ...group('g'), replicas: 3, minSize: 0 };
    const snap = snapshot({ groups: [g], nodes: ['n1', 'n2', 'n3'].map((n) => node(n, { groupId: g.id })) });
    const allowance = new DisruptionAllowance(snap, () => ({ ...DEFAULT_DISRUPTION, budgets: [{ nodes: '100%' }] }), new Set(), undefined, undefined, new PdbAllowance([pdb('web', 'web', 1)]));
    expect(allowance.blocked(g, 'Underutilized', [web('a'), web('b')])).to.deep.equal({ by: 'pdb', why: 'PodDisruptionBudget default/web allows 1 more disruption(s), the plan needs 2' });
    expect(allowance.take(g, 'Underutilized', [web('a')])).to.equal(true);
    expect(allowance.take(g, 'Underutilized', [web('b')])).to.equal(false);
    // Nodes with no covered pods still go.
    expect(allowance.take(g, 'Empty')).to.equal(true);
  });
});
