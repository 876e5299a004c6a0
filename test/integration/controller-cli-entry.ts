// Runs the `headroom` CLI from source (tsx), for tests that need it as a real process.
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
