import {
  AnnotationQuery,
  AnnotationSupport,
  CoreApp,
  CustomVariableSupport,
  DataFrame,
  DataQueryRequest,
  DataQueryResponse,
  DataSourceInstanceSettings,
  Field,
  FieldType,
  getDefaultTimeRange,
  LegacyMetricFindQueryOptions,
  MetricFindValue,
  ScopedVars,
  TimeRange,
} from '@grafana/data';
import { DataSourceWithBackend, getTemplateSrv, TemplateSrv } from '@grafana/runtime';
import { from, lastValueFrom, map, Observable } from 'rxjs';

import { AnnotationQueryEditor } from './components/AnnotationQueryEditor';
import { VariableQueryEditor } from './components/VariableQueryEditor';
import { runText } from './runs';
import {
  DEFAULT_QUERY,
  DEFAULT_VARIABLE_QUERY,
  DensityOptions,
  DensityQuery,
  DensityVariableQuery,
  RUN_RANGE,
  RunInfo,
  VariableQueryType,
} from './types';

/** Joins the values of a multi-value variable inside one interpolated string; it cannot occur in a run id. */
const MULTI_VALUE_SEPARATOR = '\u0000';

export class DataSource extends DataSourceWithBackend<DensityQuery, DensityOptions> {
  private readonly injectedTemplateSrv?: TemplateSrv;

  constructor(instanceSettings: DataSourceInstanceSettings<DensityOptions>, templateSrv?: TemplateSrv) {
    super(instanceSettings);
    // Resolved lazily: Grafana sets the template service after plugins load.
    this.injectedTemplateSrv = templateSrv;
    this.variables = new DensityVariableSupport(this);
  }

  private get templateSrv(): TemplateSrv {
    return this.injectedTemplateSrv ?? getTemplateSrv();
  }

  /** Run and steady-window regions (queryType `annotations`) through Grafana's standard frame → event mapping. */
  annotations: AnnotationSupport<DensityQuery> = {
    getDefaultQuery: () => ({ queryType: 'annotations', run: RUN_RANGE }),
    prepareQuery: (anno: AnnotationQuery<DensityQuery>) => ({
      refId: 'Anno',
      run: RUN_RANGE,
      ...anno.target,
      queryType: 'annotations',
    }),
    QueryEditor: AnnotationQueryEditor,
  };

  getDefaultQuery(_: CoreApp): Partial<DensityQuery> {
    return DEFAULT_QUERY;
  }

  /**
   * Interpolates dashboard variables in run, testName and tag; the backend
   * never sees variable values. A multi-value run variable becomes a list of
   * ids (duplicates dropped, order kept). If a run expression interpolates to
   * nothing, the raw text goes through so the backend's error names the
   * variable instead of silently reading another window. Multi-value
   * testName/tag/keys are joined with commas; baseline and candidate take
   * one run each.
   */
  applyTemplateVariables(query: DensityQuery, scopedVars: ScopedVars): DensityQuery {
    const out: DensityQuery = { ...query, run: this.interpolateRun(query.run ?? RUN_RANGE, scopedVars) };
    if (query.testName !== undefined) {
      out.testName = this.templateSrv.replace(query.testName, scopedVars, 'csv');
    }
    if (query.tag !== undefined) {
      out.tag = this.templateSrv.replace(query.tag, scopedVars, 'csv');
    }
    // baseline and candidate name one run each; a multi-value variable
    // gives its first value. keys may hold a multi-value variable (csv).
    for (const key of ['baseline', 'candidate'] as const) {
      const v = query[key];
      if (v !== undefined) {
        out[key] = this.templateSrv.replace(v, scopedVars, (value: unknown) =>
          Array.isArray(value) ? String(value[0] ?? '') : String(value)
        );
      }
    }
    if (Array.isArray(query.keys)) {
      out.keys = query.keys.map((k) => this.templateSrv.replace(k, scopedVars, 'csv'));
    } else if (query.keys !== undefined) {
      out.keys = this.templateSrv.replace(query.keys, scopedVars, 'csv');
    }
    return out;
  }

  interpolateVariablesInQueries(queries: DensityQuery[], scopedVars: ScopedVars): DensityQuery[] {
    return queries.map((q) => ({ ...this.applyTemplateVariables(q, scopedVars), datasource: this.getRef() }));
  }

  /** Hidden queries are not sent. */
  filterQuery(query: DensityQuery): boolean {
    return !query.hide;
  }

  private interpolateRun(run: string | string[], scopedVars: ScopedVars): string | string[] {
    const raw = Array.isArray(run) ? run : [run];
    const ids: string[] = [];
    for (const r of raw) {
      const replaced = this.templateSrv.replace(r, scopedVars, (value: unknown) =>
        Array.isArray(value) ? value.join(MULTI_VALUE_SEPARATOR) : String(value)
      );
      for (const part of replaced.split(MULTI_VALUE_SEPARATOR)) {
        const id = part.trim();
        if (id !== '' && !ids.includes(id)) {
          ids.push(id);
        }
      }
    }
    if (ids.length === 0) {
      return run;
    }
    return ids.length === 1 && !Array.isArray(run) ? ids[0] : ids;
  }

  /** Lists runs through the backend resource `GET /runs` (for the editors' run picker). */
  async listRuns(range?: TimeRange): Promise<RunInfo[]> {
    const params = range ? { from: String(range.from.valueOf()), to: String(range.to.valueOf()) } : undefined;
    const body = await this.getResource<unknown>('runs', params);
    const list = Array.isArray(body) ? body : isObject(body) && Array.isArray(body.runs) ? body.runs : [];
    return list.filter((r): r is RunInfo => isObject(r) && typeof r.id === 'string' && r.id !== '');
  }

  /** Lists test names through the backend resource `GET /tests`. */
  async listTests(): Promise<string[]> {
    const body = await this.getResource<unknown>('tests');
    const list = Array.isArray(body) ? body : isObject(body) && Array.isArray(body.tests) ? body.tests : [];
    return list.filter((t): t is string => typeof t === 'string');
  }

  /**
   * Variable values through the backend: `runs` (value = run id, text =
   * `<test_name> <tag> <start time>`) or `tests` (test names). Runs are those
   * the catalogs hold for the dashboard range, like a `runs` panel with
   * `run: "range"`. A plain string query (`"runs"`, `"tests"`) is accepted for
   * dashboards written by hand.
   */
  async metricFindQuery(
    query: DensityVariableQuery | string,
    options?: LegacyMetricFindQueryOptions
  ): Promise<MetricFindValue[]> {
    const vq: DensityVariableQuery =
      typeof query !== 'object' || query === null
        ? { refId: 'variable', queryType: String(query ?? '').trim() === 'tests' ? 'tests' : 'runs' }
        : query;
    const target: DensityQuery = { refId: vq.refId || 'variable', queryType: vq.queryType, run: RUN_RANGE };
    if (vq.testName) {
      target.testName = vq.testName;
    }
    if (vq.tag) {
      target.tag = vq.tag;
    }
    const range = options?.range ?? getDefaultTimeRange();
    const request = {
      app: CoreApp.Dashboard,
      requestId: `density-variable-${vq.queryType}`,
      interval: '1m',
      intervalMs: 60_000,
      range,
      scopedVars: options?.scopedVars ?? {},
      targets: [target],
      timezone: 'browser',
      startTime: Date.now(),
    } as DataQueryRequest<DensityQuery>;
    const response = await lastValueFrom(this.query(request));
    if (response.errors?.length) {
      throw new Error(response.errors.map((e) => e.message).join('; '));
    }
    return framesToMetricFindValues(response.data as DataFrame[], vq.queryType);
  }
}

/** Query-variable support with this plugin's own editor (runs or test names). */
export class DensityVariableSupport extends CustomVariableSupport<DataSource, DensityVariableQuery> {
  editor = VariableQueryEditor;

  constructor(private readonly datasource: DataSource) {
    super();
  }

  query(request: DataQueryRequest<DensityVariableQuery>): Observable<DataQueryResponse> {
    const target = request.targets[0] ?? { refId: 'variable', ...DEFAULT_VARIABLE_QUERY };
    return from(this.datasource.metricFindQuery(target, { range: request.range, scopedVars: request.scopedVars })).pipe(
      map((data) => ({ data }))
    );
  }
}

/**
 * Turns backend frames into variable values. Frames with `text`/`value`
 * fields are taken as they are; a runs table (field `id`) gets the spec's
 * text; anything else uses its first string field. Duplicate values are
 * dropped.
 */
export function framesToMetricFindValues(frames: DataFrame[], kind: VariableQueryType): MetricFindValue[] {
  const out: MetricFindValue[] = [];
  const seen = new Set<string>();
  const push = (text: string, value: string) => {
    if (value === '' || seen.has(value)) {
      return;
    }
    seen.add(value);
    out.push({ text, value });
  };
  for (const frame of frames ?? []) {
    const byName = (name: string) => frame.fields.find((f) => f.name.toLowerCase() === name);
    const text = byName('text');
    const value = byName('value');
    const id = byName('id');
    for (let i = 0; i < frame.length; i++) {
      if (value) {
        const v = cell(value, i);
        push(text ? cell(text, i) : v, v);
      } else if (kind === 'runs' && id) {
        const v = cell(id, i);
        push(runText(cell(byName('test_name'), i), cell(byName('tag'), i), timeMs(byName('start'), i), v), v);
      } else {
        const first = frame.fields.find((f) => f.type === FieldType.string);
        if (first) {
          const v = cell(first, i);
          push(v, v);
        }
      }
    }
  }
  return out;
}

function cell(field: Field | undefined, i: number): string {
  const v = field?.values[i];
  return v === null || v === undefined ? '' : String(v);
}

/** A time field is epoch ms; a number field is taken as Unix seconds when it is too small to be ms. */
function timeMs(field: Field | undefined, i: number): number | undefined {
  const v = field?.values[i];
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    return undefined;
  }
  return field?.type === FieldType.time || v > 1e11 ? v : v * 1000;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}
