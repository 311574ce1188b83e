import { runWorker } from 'approval-connector-kit';
import build from './connector.js';

// The worker, configured by environment variables (see .env.example) and stopped gracefully by SIGTERM. A container
// starts it as `node dist/main.js`, not through npm, so that the signal reaches it.
process.exitCode = await runWorker(build);
