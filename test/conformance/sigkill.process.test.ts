import type { ConformanceSubject } from 'approval-connector-kit/conformance';
import { formatReport, runConformance } from 'approval-connector-kit/conformance';
import { describe, expect, it } from 'vitest';
import { FileDriver, FileSource } from './fixtures/file-source.js';
import { type Bug, FakeIncrementalConnector } from './support/connectors.js';

// The connector runs as processes of their own (`connector run`), killed with SIGKILL: their death is the point.
function fileSubject(...bugs: Bug[]): ConformanceSubject<FileDriver> {
  return {
    name: `file-backed connector${bugs.length > 0 ? ` with ${bugs.join(', ')}` : ''}`,
    driver: () => new FileDriver(),
    connector: (driver) => new FakeIncrementalConnector(new FileSource(driver.file), new Set(bugs)),
    process: {
      module: 'test/conformance/fixtures/file-connector.ts',
      env: (driver) => ({ FILE_SOURCE: driver.file, CONNECTOR_BUGS: bugs.join(',') }),
    },
  };
}

describe('sync.sigkill', () => {
  it('passes a connector whose processes, killed with SIGKILL at any point, lose nothing', async () => {
    const report = await runConformance(fileSubject(), { seed: 7, only: ['sync.sigkill'] });
    expect(report.checks, formatReport(report)).toMatchObject([{ name: 'sync.sigkill', status: 'pass' }]);
  }, 120_000);

  it('fails a connector that saves progress of its own before the service acknowledged it, which only a crash shows', async () => {
    const report = await runConformance(fileSubject('progress-saved-before-acknowledged'), {
      seed: 7,
      only: ['sync.exact', 'sync.sigkill'],
    });
    expect(report.checks, formatReport(report)).toMatchObject([
      { name: 'sync.exact', status: 'pass' },
      // What was read before the kill and never acknowledged: missing, or there in an older version.
      {
        name: 'sync.sigkill',
        status: 'fail',
        happened: expect.stringMatching(/" is missing|" has data .*, the source/),
      },
    ]);
  }, 120_000);

  it('is skipped, saying what it needs, for a subject without a process', async () => {
    const { process: _, ...subject } = fileSubject();
    const report = await runConformance(subject, { seed: 7, only: ['sync.sigkill'] });
    expect(report.checks).toMatchObject([
      { name: 'sync.sigkill', status: 'skip', happened: expect.stringContaining('process') },
    ]);
  });
});
