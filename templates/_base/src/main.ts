// First, before the kit and its dependencies load: on a Node.js the kit does not run on, print which one this is and
// which one it needs, and exit 1.
import 'approval-connector-kit/check-node';
import { runWorker } from 'approval-connector-kit';
import build from './connector.js';

// The worker, configured by environment variables (see .env.example) and stopped gracefully by SIGTERM. A container
// starts it as `node dist/main.js`, not through npm, so that the signal reaches it. Where the project has installed
// @opentelemetry/sdk-node, it starts the OpenTelemetry SDK from the OTEL_* variables first (README.md, "Traces").
process.exitCode = await runWorker(build);
