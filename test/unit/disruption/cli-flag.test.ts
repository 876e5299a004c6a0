import { expect } from 'chai';
import { UsageError } from '../../../src/cli/command.js';
import { controllerCommand } from '../../../src/cli/controller.js';

describe('headroom controller --disruption', () => {
  it('is documented and rejects anything but true / false with a usage error, before touching a cluster', async () => {
    expect(controllerCommand.usage).to.match(/--disruption true\|false/);
    let err: unknown;
    try {
      await controllerCommand.run({ disruption: 'maybe', kubeconfig: '/nonexistent' }, []);
    } catch (e) {
      err = e;
    }
    expect(err).to.be.instanceOf(UsageError);
    expect((err as Error).message).to.equal('controller: --disruption must be true or false, got "maybe"');
  });
});
