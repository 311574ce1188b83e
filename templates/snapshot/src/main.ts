import { runWorker } from 'approval-connector-kit';
import { MyConnector } from './connector.js';
import { exampleRequests, Requests } from './source.js';

// The worker: configured by environment variables (see .env.example), stopped gracefully by SIGTERM or Ctrl+C.
process.exitCode = await runWorker(() => new MyConnector(new Requests(exampleRequests())), {
  env: process.env,
  argv: process.argv.slice(2),
});
