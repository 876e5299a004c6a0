import { expect } from 'chai';
import { compileSelector, UnmodelableSelector } from '../../../../src/scheduling/dra/cel.js';
import { countedGpuDevices, sliceDevices, type Device } from '../../../../src/scheduling/dra/device.js';
import { parseNanoQuantity } from '../../../../src/scheduling/dra/quantity.js';

const gpu: Device = sliceDevices({
  driver: 'gpu.example.com', pool: { name: 'node-1' }, nodeName: 'node-1',
  devices: [{
    name: 'gpu-0',
    attributes: { model: { string: 'a100' }, index: { int: 2 }, mig: { bool: false }, driverVersion: { version: '1.2.3' }, 'other.example.com/family': { string: 'ampere' } },
    capacity: { memory: { value: '80Gi' } },
  }],
}).devices[0]!;

const on = (expr: string, d: Device = gpu) => compileSelector(expr).evaluate(d);

describe('DRA CEL selectors (@bufbuild/cel)', () => {
  it('reads driver, attributes by domain (the driver\'s by default) and capacity', () => {
    expect(on('device.driver == "gpu.example.com"')).to.equal(true);
    expect(on('device.driver == "other.example.com"')).to.equal(false);
    expect(on('device.attributes["gpu.example.com"].model == "a100"')).to.equal(true);
    expect(on('device.attributes["gpu.example.com"].index >= 2 && !device.attributes["gpu.example.com"].mig')).to.equal(true);
    expect(on('device.attributes["other.example.com"].family == "ampere"')).to.equal(true);
    expect(on('device.attributes["gpu.example.com"].model.startsWith("a1")')).to.equal(true);
  });

  it('compares quantities exactly, by value', () => {
    expect(on('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0')).to.equal(true);
    expect(on('device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("80Gi"))')).to.equal(false);
    expect(on('device.capacity["gpu.example.com"].memory == quantity("85899345920")')).to.equal(true);
    expect(on('device.capacity["gpu.example.com"].memory.isLessThan(quantity("0.1Ti"))')).to.equal(true);
    expect(on('quantity("500m").isLessThan(quantity("1"))')).to.equal(true);
    expect(on('isQuantity("12Gi") && !isQuantity("12 GiB")')).to.equal(true);
  });

  it('compares version attributes as semantic versions', () => {
    expect(on('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))')).to.equal(true);
    expect(on('device.attributes["gpu.example.com"].driverVersion == semver("1.2.3")')).to.equal(true);
    expect(on('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))')).to.equal(true);
  });

  it('an unknown domain is an empty map; an unknown attribute is an error, as in kube-scheduler', () => {
    expect(on('has(device.attributes["nothing.example.com"].x)')).to.equal(false);
    expect(on('device.attributes["nothing.example.com"].x == 1')).to.have.property('error');
    expect(on('device.attributes["gpu.example.com"].missing == "x"')).to.have.property('error').that.does.not.match(/^unsupported/);
  });

  it('marks what Headroom lacks as unsupported, and a parse error as unmodellable', () => {
    expect(on('device.attributes["gpu.example.com"].model.frobnicate()')).to.have.property('error').that.matches(/^unsupported: /);
    // Kubernetes' libraries Headroom lacks (kube-apiserver accepts these).
    expect(on('isIP("10.0.0.1")')).to.have.property('error').that.matches(/^unsupported: /);
    expect(on('sets.contains(["a"], ["a"])')).to.have.property('error').that.matches(/^unsupported: /);
    expect(() => compileSelector('device.driver ==')).to.throw(UnmodelableSelector);
    expect(on('device.driver')).to.have.property('error').that.matches(/not a bool/);
  });

  it('evaluates the devices Cluster Autoscaler templates from dra-driver + gpu-count', () => {
    const devices = countedGpuDevices('gpu.nvidia.com', 2, 'md-gpu');
    expect(devices.map((d) => d.name)).to.deep.equal(['gpu-0', 'gpu-1']);
    expect(on('device.attributes["gpu.nvidia.com"].type == "gpu"', devices[0]!)).to.equal(true);
  });
});

describe('DRA quantities and slices', () => {
  it('parses quantities to exact nano-units', () => {
    expect(parseNanoQuantity('1Gi')).to.equal(2n ** 30n * 10n ** 9n);
    expect(parseNanoQuantity('500m')).to.equal(500_000_000n);
    expect(parseNanoQuantity('1.5k')).to.equal(1_500_000_000_000n);
    expect(parseNanoQuantity('2e3')).to.equal(2_000_000_000_000n);
    expect(() => parseNanoQuantity('12 GiB')).to.throw(/invalid quantity/);
  });

  it('skips partitionable devices (shared counters) and refuses a device without a name', () => {
    const r = sliceDevices({ driver: 'd', pool: { name: 'p' }, devices: [{ name: 'whole' }, { name: 'part', consumesCounters: [{ counterSet: 'x', counters: {} }] }] });
    expect(r.devices.map((d) => d.name)).to.deep.equal(['whole']);
    expect(r.skipped).to.have.length(1);
    expect(() => sliceDevices({ driver: 'd', pool: { name: 'p' }, devices: [{}] })).to.throw(/no name/);
  });
});
