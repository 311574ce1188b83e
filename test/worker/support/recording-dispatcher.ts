import { Agent, type Dispatcher } from 'undici';

/** A request as it left the client: method, path (with query) and its body, if any. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The body as text; `undefined` when the request had none. */
  body: string | undefined;
}

/**
 * An undici dispatcher that records every request it sends, for `service: { dispatcher }`. The client does not
 * close a dispatcher passed to it: call `close()` when done.
 */
export function recordingDispatcher(): {
  dispatcher: Dispatcher;
  requests: RecordedRequest[];
  close: () => Promise<void>;
} {
  const requests: RecordedRequest[] = [];
  const agent = new Agent();
  const dispatcher = agent.compose((dispatch) => (options, handler) => {
    requests.push({
      method: options.method,
      path: options.path,
      body:
        options.body === undefined || options.body === null
          ? undefined
          : typeof options.body === 'string'
            ? options.body
            : Buffer.isBuffer(options.body) || options.body instanceof Uint8Array
              ? Buffer.from(options.body).toString('utf8')
              : '(stream)',
    });
    return dispatch(options, handler);
  });
  return { dispatcher, requests, close: () => agent.close() };
}
