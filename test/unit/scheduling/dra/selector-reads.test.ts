import { expect } from 'chai';
import fc from 'fast-check';
import { compileSelector, deviceReadKey } from '../../../../src/scheduling/dra/cel.js';
import { deviceShapeKey, type Device } from '../../../../src/scheduling/dra/device.js';
import { DeviceModel } from '../../../../src/scheduling/dra/device-model.js';

/**
 * Selector verdicts are memoized by what a selector reads of a device (cel.ts
 * CompiledSelector.reads, deviceReadKey), so devices with unique uuids still share
 * them. These tests hold the analysis to being exact: equal keys, equal verdicts.
 */

const D = 'gpu.example.com';
const dev = (name: string, attrs: Record<string, Device['attributes'][string][string]>, memGi?: number): Device => ({
  driver: D, pool: 'p', name, attributes: { [D]: attrs }, capacity: memGi === undefined ? {} : { [D]: { memory: BigInt(memGi) * 2n ** 30n * 1_000_000_000n } },
});

describe('DRA selector reads and the verdict memo', () => {
  it('knows what the usual selector forms read', () => {
    expect(compileSelector(`device.driver == "${D}"`).reads).to.deep.equal(['driver']);
    expect(compileSelector(`device.attributes["${D}"].model == "a100" && device.capacity["${D}"].memory.compareTo(quantity("40Gi")) >= 0`).reads)
      .to.deep.equal([JSON.stringify(['attributes', D, 'model']), JSON.stringify(['capacity', D, 'memory'])]);
    expect(compileSelector(`has(device.attributes["${D}"].mig) && device.attributes["${D}"]["index"] > 1`).reads)
      .to.deep.equal([JSON.stringify(['attributes', D, 'index']), JSON.stringify(['attributes', D, 'mig'])]);
    expect(compileSelector(`"mig" in device.attributes["${D}"]`).reads).to.deep.equal([JSON.stringify(['attributes', D, 'mig'])]);
    expect(compileSelector('[1, 2].exists(x, x > 1)').reads).to.deep.equal([]);
  });

  it('gives up on anything that reads more than named entries', () => {
    for (const expr of [
      `device.attributes["${D}"].exists(k, k.startsWith("u"))`,
      `size(device.attributes["${D}"]) > 3`,
      `"${D}" in device.attributes`,
      `device.attributes.exists(d, d == "${D}")`,
      `device.attributes["${D}"][device.driver] == "x"`,
      '[device].size() == 1',
      `[1].exists(device, device == 1)`,
      `device == device`,
    ]) expect(compileSelector(expr).reads, expr).to.equal(undefined);
  });

  it('keys devices apart on what is read, together on what is not', () => {
    const reads = compileSelector(`device.attributes["${D}"].model == "a100"`).reads!;
    const a = dev('gpu-0', { model: 'a100', uuid: 'GPU-1' });
    const b = dev('gpu-1', { model: 'a100', uuid: 'GPU-2' });
    const c = dev('gpu-2', { model: 't4', uuid: 'GPU-3' });
    const none = dev('gpu-3', { uuid: 'GPU-4' });
    expect(deviceReadKey(a, reads)).to.equal(deviceReadKey(b, reads));
    expect(deviceReadKey(a, reads)).to.not.equal(deviceReadKey(c, reads));
    expect(deviceReadKey(a, reads)).to.not.equal(deviceReadKey(none, reads));
    // An int is not the string that spells it.
    expect(deviceReadKey(dev('x', { model: 5n }), reads)).to.not.equal(deviceReadKey(dev('y', { model: '5n' }), reads));
    expect(deviceShapeKey(dev('x', { model: 5n }))).to.not.equal(deviceShapeKey(dev('y', { model: '5n' })));
  });

  it('classifies devices with unique uuids by the attributes the selectors read', () => {
    const classes = new Map([['gpu', { selectors: [`device.driver == "${D}"`] }]]);
    const model = new DeviceModel(classes);
    const big = model.signature({ name: 'r', deviceClassName: 'gpu', selectors: [`device.capacity["${D}"].memory.compareTo(quantity("40Gi")) >= 0`], count: 1 });
    const one = model.signature({ name: 'r', deviceClassName: 'gpu', selectors: [`device.attributes["${D}"].uuid == "GPU-7"`], count: 1 });
    expect(big).to.have.property('id');
    expect(one).to.have.property('id');
    const devices = Array.from({ length: 10 }, (_, i) => dev(`gpu-${i}`, { uuid: `GPU-${i}` }, i < 5 ? 80 : 16));
    const cap = model.capacity(devices, new Set());
    const t = model.table();
    const count = (sig: string) => t.atomsOf[sig]!.reduce((n, atom) => n + (cap.resources[atom] ?? 0), 0);
    expect(count((big as { id: string }).id)).to.equal(5);
    expect(count((one as { id: string }).id)).to.equal(1);
  });

  it('memoized verdicts equal direct evaluation on random devices and selectors', () => {
    const EXPRS = [
      `device.attributes["${D}"].model == "a100"`,
      `device.attributes["${D}"].index > 2`,
      `has(device.attributes["${D}"].model) && device.attributes["${D}"].model.startsWith("a")`,
      `device.capacity["${D}"].memory.compareTo(quantity("40Gi")) >= 0`,
      `"index" in device.attributes["${D}"]`,
      `device.attributes["${D}"].exists(k, k == "uuid")`,
      `device.driver == "${D}" || device.attributes["other.example.com"].model == "x"`,
    ];
    const attrs = fc.record({
      model: fc.option(fc.constantFrom('a100', 'a10', 't4'), { nil: undefined }),
      index: fc.option(fc.bigInt(0n, 5n), { nil: undefined }),
      uuid: fc.option(fc.string({ maxLength: 3 }), { nil: undefined }),
    });
    const device = fc.tuple(attrs, fc.option(fc.constantFrom(16, 40, 80), { nil: undefined }), fc.boolean()).map(([a, mem, other]): Device => {
      const d = dev('d', Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)) as Record<string, string | bigint>, mem);
      return other ? { ...d, driver: 'other.example.com' } : d;
    });
    fc.assert(fc.property(fc.subarray(EXPRS, { minLength: 1 }), fc.array(device, { minLength: 1, maxLength: 12 }), (exprs, devices) => {
      const model = new DeviceModel(new Map([['c', { selectors: [] }]]));
      const ids = exprs.map((e) => (model.signature({ name: 'r', deviceClassName: 'c', selectors: [e], count: 1 }) as { id: string }).id);
      const cap = model.capacity(devices, new Set());
      const t = model.table();
      ids.forEach((id, k) => {
        const compiled = compileSelector(exprs[k]!);
        const direct = devices.filter((d) => compiled.evaluate(d) === true).length;
        const counted = t.atomsOf[id]!.reduce((n, atom) => n + (cap.resources[atom] ?? 0), 0);
        expect(counted).to.equal(direct);
        const errors = devices.some((d) => typeof compiled.evaluate(d) === 'object');
        expect(cap.blocked.includes(id)).to.equal(errors);
      });
    }), { numRuns: 200 });
  });
});
