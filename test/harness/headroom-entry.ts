// Runs the `headroom` CLI from source (tsx), for the harness's own processes
// (`headroom dev-cluster --demo` starts the controller with it).
import { main } from '../../src/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
