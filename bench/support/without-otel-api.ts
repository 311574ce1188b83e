/**
 * Imported first (`--import`) by a connector process of the benchmarks that stands for a project where the kit
 * cannot load `@opentelemetry/api` (a strict layout that does not give it prom-client's copy): every import of it
 * from the kit's source fails, as it does where it is not installed. prom-client still gets its own.
 */
import { registerHooks } from 'node:module';

const KIT_SOURCE = new URL('../../src/', import.meta.url).href;

registerHooks({
  resolve(specifier, context, nextResolve) {
    const fromKit = context.parentURL?.startsWith(KIT_SOURCE) === true;
    if (fromKit && (specifier === '@opentelemetry/api' || specifier.startsWith('@opentelemetry/api/'))) {
      throw Object.assign(new Error(`Cannot find package '${specifier}'`), { code: 'ERR_MODULE_NOT_FOUND' });
    }
    return nextResolve(specifier, context);
  },
});
