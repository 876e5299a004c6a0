import { EventEmitter } from 'node:events';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { installLastResort } from '../../../src/cli/last-resort.js';
import { registry } from '../../../src/server/metrics.js';

const ROOT = new URL('../../../', import.meta.url);

describe('last-resort handler (ADR 0043)', () => {
  it('logs one line per uncaught error, counts it, and rate-limits the lines', async () => {
    const proc = new EventEmitter();
    const lines: string[] = [];
    let t = 0;
    const uninstall = installLastResort({ log: (l) => lines.push(l), linesPerMinute: 2, now: () => t }, proc);
    proc.emit('uncaughtException', new RangeError('Maximum call stack size exceeded\nsecond line'));
    proc.emit('unhandledRejection', 'plain reason');
    proc.emit('uncaughtException', new Error('third'));
    proc.emit('uncaughtException', new Error('fourth'));
    t = 61_000;
    proc.emit('uncaughtException', new Error('fifth'));
    uninstall();
    proc.emit('uncaughtException', new Error('after uninstall'));
    expect(lines).to.have.length(3);
    expect(lines[0]).to.match(/^uncaught exception, still serving: RangeError: Maximum call stack size exceeded \(at /);
    expect(lines[1]).to.equal('uncaught rejection, still serving: plain reason');
    expect(lines[2]).to.match(/^uncaught exception, still serving \(2 more not logged\): Error: fifth/);
    expect(lines.every((l) => !l.includes('\n'))).to.equal(true);
    const metric = await registry.getSingleMetricAsString('headroom_uncaught_errors_total');
    expect(metric).to.match(/headroom_uncaught_errors_total\{kind="exception"\} [4-9]/);
  });

  it('keeps `headroom serve` serving after an uncaught exception and an unhandled rejection (issue 10 defect 1)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'last-resort-'));
    const entry = join(dir, 'cli.mjs');
    const faults = join(dir, 'faults.mjs');
    const snapshot = join(dir, 'snapshot.yaml');
    writeFileSync(entry, `import { main } from ${JSON.stringify(new URL('src/cli/main.ts', ROOT).href)};\nprocess.exitCode = await main(process.argv.slice(2));\n`);
    // Preloaded: faults that nothing catches, thrown once the server is up.
    writeFileSync(faults, [
      "setTimeout(() => { throw new Error('boom'); }, 1500);",
      "setTimeout(() => { void Promise.reject(new Error('rejected')); }, 1600);",
    ].join('\n'));
    writeFileSync(snapshot, 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', faults, entry, 'serve', '--snapshot', snapshot, '--no-tls', '--port', '0'], { cwd: ROOT.pathname });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    try {
      const deadline = Date.now() + 30_000;
      while (!/listening on (http\S+)/.test(stdout) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      const url = /listening on (http\S+)/.exec(stdout)?.[1];
      expect(url, stderr).to.be.a('string');
      while (!stderr.includes('uncaught rejection') && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
      expect(child.exitCode, stderr).to.equal(null);
      expect(stderr).to.match(/uncaught exception, still serving: Error: boom/);
      expect(stderr).to.match(/uncaught rejection, still serving: Error: rejected/);
      const res = await fetch(`${url}/scheduler/prioritize`, { method: 'POST', body: JSON.stringify({ Pod: {}, NodeNames: ['n1'] }) });
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.equal([]);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
