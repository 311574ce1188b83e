import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/connector/index.js';
import { REDACTED } from '../../src/connector/internal.js';
import { componentLogger, createLogger, secretScrubbingLogger } from '../../src/worker/operations/logger.js';

function memoryStream() {
  const lines: string[] = [];
  return {
    lines,
    write(line: string) {
      lines.push(line);
    },
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    text: () => lines.join(''),
  };
}

const secrets = {
  token: 'tok-0001',
  password: 'pw-0002',
  authorization: 'Bearer auth-0003',
  Authorization: 'Basic auth-0004',
  secretKey: 'sk-0005',
  privateKey: 'pk-0006',
  apiKey: 'api-0007',
  cookie: 'session=cookie-0008',
  xApiKey: 'xkey-0009',
  nested: 'deep-0010',
  credential: 'cred-0011',
  revealed: 'secret-0012',
};

describe('createLogger', () => {
  it('never writes a secret under a known name, at any depth up to four levels, nor a Secret', () => {
    const stream = memoryStream();
    const logger = createLogger({ destination: stream });
    logger.info(
      {
        token: secrets.token,
        password: secrets.password,
        headers: { authorization: secrets.authorization, Authorization: secrets.Authorization },
        req: { headers: { cookie: secrets.cookie, 'x-api-key': secrets.xApiKey } },
        keys: { secretKey: secrets.secretKey, privateKey: secrets.privateKey },
        source: { client: { config: { apiKey: secrets.apiKey, password: secrets.nested } } },
        task: { credentials: { username: 'ada', password: secrets.credential } },
        list: [{ token: secrets.token }],
        wrapped: new Secret(secrets.revealed),
        user: 'ada',
      },
      'request sent',
    );
    logger.info('interpolated %s and %j', new Secret(secrets.revealed), { token: secrets.token });

    const text = stream.text();
    for (const secret of Object.values(secrets)) expect(text).not.toContain(secret);
    expect(text).toContain(REDACTED);
    const [record] = stream.records();
    expect(record).toMatchObject({ user: 'ada', msg: 'request sent', headers: { authorization: REDACTED } });
  });

  it("never writes the credentials an HTTP client's error carries", () => {
    const stream = memoryStream();
    const logger = createLogger({ destination: stream });
    const headers = { Authorization: 'Bearer tok-0014', accept: 'application/json' };
    const error = Object.assign(new Error('Request to https://ada:pw-0015@sap.example.com failed'), {
      config: { headers },
      response: { status: 401, config: { headers } },
      request: { _header: 'GET / HTTP/1.1\r\nAuthorization: Basic cmF3LTAwMTY=\r\n' },
    });
    logger.error(error);
    logger.error(
      { err: new Error('upstream said: invalid token Bearer tok-0017', { cause: error }) },
      'failed',
    );
    const text = stream.text();
    for (const secret of ['tok-0014', 'pw-0015', 'cmF3LTAwMTY=', 'tok-0017'])
      expect(text).not.toContain(secret);
    expect(stream.records()[0]).toMatchObject({ err: { type: 'Error', response: { status: 401 } } });
    expect(text).toContain('application/json');
  });

  it('binds the component once in child loggers, keeping redaction', () => {
    const stream = memoryStream();
    const sync = componentLogger(createLogger({ destination: stream }), 'sync', { connector: 'jira' });
    sync.info({ token: secrets.token }, 'pushed');
    expect(stream.records()[0]).toMatchObject({
      component: 'sync',
      connector: 'jira',
      token: REDACTED,
      msg: 'pushed',
    });
    expect(stream.text()).not.toContain(secrets.token);
  });

  it('redacts through an injected logger and keeps its level and destination', () => {
    const stream = memoryStream();
    const injected = pino({ level: 'warn' }, stream);
    const logger = createLogger({ logger: injected });
    logger.info({ password: secrets.password }, 'below the level');
    logger.warn({ password: secrets.password }, 'kept');
    logger.warn({ err: new Error('sent Bearer tok-0018') }, 'errors are scrubbed too');
    expect(stream.records()).toHaveLength(2);
    expect(stream.records()[0]).toMatchObject({ password: REDACTED, msg: 'kept' });
    expect(stream.text()).not.toContain('tok-0018');
  });

  it('redacts extra paths given as options', () => {
    const stream = memoryStream();
    const logger = createLogger({ destination: stream, redact: ['sap.sessionId'] });
    logger.info({ sap: { sessionId: 'sess-0013' } });
    expect(stream.text()).not.toContain('sess-0013');
  });

  it('logs from the level given, info by default', () => {
    const quiet = memoryStream();
    createLogger({ destination: quiet, level: 'error' }).warn('dropped');
    expect(quiet.lines).toHaveLength(0);

    const normal = memoryStream();
    const logger = createLogger({ destination: normal });
    logger.debug('dropped');
    logger.info('kept');
    expect(normal.records().map((record) => record.msg)).toEqual(['kept']);
  });
});

describe('secretScrubbingLogger', () => {
  const password = 'pw-"quoted"\\and-0019';

  it("writes none of a task's values: message, interpolation, error message and stack, fields, keys, JSON text", () => {
    const stream = memoryStream();
    const logger = secretScrubbingLogger(createLogger({ destination: stream }), [new Secret(password)]);
    logger.error({ err: new Error(`login refused for ada/${password}`) }, 'login failed');
    logger.error(new Error(`as the first argument: ${password}`));
    logger.warn(`retrying with ${password}`);
    logger.warn('interpolated: %s', password);
    logger.info({ request: { body: JSON.stringify({ user: 'ada', password }), tries: [password] } }, 'sent');
    logger.info({ [password]: 1 }, 'as a key');

    // biome-ignore lint/suspicious/noExplicitAny: the test reads into the parsed lines freely.
    const records = stream.records() as any[]; // every line is still valid JSON
    expect(records).toHaveLength(6);
    const text = stream.text();
    const escaped = JSON.stringify(password).slice(1, -1);
    for (const form of [
      password,
      escaped,
      JSON.stringify(escaped).slice(1, -1),
      encodeURIComponent(password),
    ]) {
      expect(text).not.toContain(form);
    }
    expect(records[0]).toMatchObject({
      msg: 'login failed',
      err: { message: `login refused for ada/${REDACTED}` },
    });
    expect(String(records[0].err.stack)).toContain(`ada/${REDACTED}`);
    expect(records[1]).toMatchObject({ msg: `as the first argument: ${REDACTED}` });
    expect(records[2]).toMatchObject({ msg: `retrying with ${REDACTED}` });
    expect(records[3]).toMatchObject({ msg: `interpolated: ${REDACTED}` });
    expect(records[4]).toMatchObject({ request: { tries: [REDACTED] } });
    expect(JSON.parse(records[4].request.body)).toEqual({
      user: 'ada',
      password: REDACTED,
    });
    expect(records[5]).toMatchObject({ [REDACTED]: 1 });
  });

  it('keeps scrubbing in its children and keeps the hooks of an injected logger; the parent is not affected', () => {
    const stream = memoryStream();
    const injected = pino({ hooks: { streamWrite: (line) => line.replace('marker', 'MARKED') } }, stream);
    const parent = createLogger({ logger: injected });
    const child = secretScrubbingLogger(parent, ['value-0020']).child({ step: 2 });
    child.info('marker value-0020');
    parent.info('parent value-0020');
    expect(stream.records()).toMatchObject([
      { step: 2, msg: `MARKED ${REDACTED}` },
      { msg: 'parent value-0020' },
    ]);
  });

  it('returns the logger itself when there is no value to scrub', () => {
    const logger = createLogger({ destination: memoryStream() });
    expect(secretScrubbingLogger(logger, [])).toBe(logger);
    expect(secretScrubbingLogger(logger, [undefined, '', new Secret('')])).toBe(logger);
  });
});
