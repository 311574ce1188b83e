/**
 * Writes the OpenAPI 3.1 document of both APIs to docs/openapi.json (`npm run openapi`). The backend serves the same
 * document at GET /openapi.json; a test checks that the committed file is current.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../src/backend/openapi/document.js';

const target = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));
writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`);
console.log(`wrote ${target}`);
