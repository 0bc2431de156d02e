// The backend the gallery's editors talk to: a BackendSrv that answers the
// datasource resource `GET /runs` from a fixture, as the Go backend would
// (pkg/plugin/resources.go), so the run picker is filled through the real
// DataSource.listRuns. No Grafana server exists for the gallery.
import { BackendSrv, BackendSrvRequest, FetchError, FetchResponse } from '@grafana/runtime';
import { Observable } from 'rxjs';

import { RunInfo } from '../types';

/** The uid of the datasource whose `/runs` answers the fixture below. */
export const GALLERY_UID = 'density-gallery';
/** The uid of a datasource whose `/runs` fails as an unreachable Prometheus does. */
export const FAILING_UID = 'density-gallery-failing';
/** The error the failing datasource's backend reports (the `error` of its 502 body). */
const RUNS_ERROR = 'prometheus: Get "http://prometheus:9090/api/v1/query": dial tcp: lookup prometheus: no such host';

/** Three catalogued runs, newest first: two of a named test and one discovered from Prometheus only. */
export const GALLERY_RUNS: RunInfo[] = [
  { id: 'prom-1700100000', start: 1700100000, end: 1700103000, peak_users: 800, locust_exit_code: null },
  {
    id: 'sweep-4k/1700050000/c0ffee1',
    test_name: 'sweep-4k',
    tag: 'c0ffee1',
    start: 1700050000,
    end: 1700057200,
    steady_start: 1700051200,
    steady_end: 1700056000,
    peak_users: 4000,
    locust_exit_code: 0,
  },
  {
    id: 'sweep-1k/1700000000/c0ffee1',
    test_name: 'sweep-1k',
    tag: 'c0ffee1',
    start: 1700000000,
    end: 1700003600,
    steady_start: 1700000600,
    steady_end: 1700003000,
    peak_users: 1000,
    locust_exit_code: 0,
  },
];

let inFlight = 0;

/** True when no fixture request is pending and the answers of the last ones have been handed on. */
export function backendIdle(): boolean {
  return inFlight === 0;
}

/**
 * Answers like Grafana's backendSrv: a resolved FetchResponse, or a
 * FetchError whose `data` is the backend's JSON body with `message` copied
 * from `error` (what Grafana's backendSrv does for a body without one). The
 * answer comes in a later task, as over a network, and the request counts as
 * pending until the task after it, so whatever the editors do with the answer
 * has run by then. Any other request is a gallery bug and is logged as an
 * error, which fails the browser test.
 */
function fetchFixture<T>(options: BackendSrvRequest): Observable<FetchResponse<T>> {
  return new Observable<FetchResponse<T>>((subscriber) => {
    inFlight++;
    const settle = () => setTimeout(() => inFlight--, 0);
    const timer = setTimeout(() => {
      const m = /^\/api\/datasources\/uid\/([^/]+)\/resources\/(.+)$/.exec(options.url);
      if (m && m[2] === 'runs' && m[1] === GALLERY_UID) {
        subscriber.next(response<T>(options, 200, { runs: GALLERY_RUNS, problems: [] } as T));
        subscriber.complete();
      } else if (m && m[2] === 'runs' && m[1] === FAILING_UID) {
        subscriber.error(fetchError(options, 502, 'Bad Gateway', RUNS_ERROR));
      } else {
        console.error(`gallery backend: no fixture for ${options.method ?? 'GET'} ${options.url}`);
        subscriber.error(fetchError(options, 404, 'Not Found', 'not found'));
      }
      settle();
    }, 0);
    return () => clearTimeout(timer);
  });
}

function response<T>(config: BackendSrvRequest, status: number, data: T): FetchResponse<T> {
  return {
    data,
    status,
    statusText: 'OK',
    ok: true,
    headers: new Headers({ 'Content-Type': 'application/json' }),
    redirected: false,
    type: 'basic',
    url: config.url,
    config,
  };
}

function fetchError(config: BackendSrvRequest, status: number, statusText: string, error: string): FetchError {
  return { status, statusText, data: { error, message: error }, config };
}

function unsupported(name: string) {
  return () => Promise.reject(new Error(`gallery backend: ${name} is not supported`));
}

/** The BackendSrv to hand to setBackendSrv. */
export const galleryBackendSrv = {
  fetch: fetchFixture,
  get: <T>(url: string, params?: BackendSrvRequest['params']) =>
    new Promise<T>((resolve, reject) =>
      fetchFixture<T>({ url, params, method: 'GET' }).subscribe({ next: (r) => resolve(r.data), error: reject })
    ),
  delete: unsupported('delete'),
  post: unsupported('post'),
  patch: unsupported('patch'),
  put: unsupported('put'),
  request: unsupported('request'),
  datasourceRequest: unsupported('datasourceRequest'),
  chunked: () => {
    throw new Error('gallery backend: chunked is not supported');
  },
} as unknown as BackendSrv;
