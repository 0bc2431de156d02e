// Test helpers shared by the editor and datasource tests (not bundled: nothing in module.ts imports them).
import { DataSourceInstanceSettings, DataSourcePluginMeta, DataSourceSettings, ScopedVars } from '@grafana/data';
import { TemplateSrv } from '@grafana/runtime';

import { DensityOptions, DensitySecureJsonData } from '../types';

export function instanceSettings(jsonData: DensityOptions = {}): DataSourceInstanceSettings<DensityOptions> {
  return {
    uid: 'density-uid',
    type: 'substrate-density-datasource',
    name: 'Density',
    access: 'proxy',
    readOnly: false,
    jsonData,
    meta: { id: 'substrate-density-datasource' } as DataSourcePluginMeta,
  } as DataSourceInstanceSettings<DensityOptions>;
}

export function settings(
  overrides: Partial<DataSourceSettings<DensityOptions, DensitySecureJsonData>> = {}
): DataSourceSettings<DensityOptions, DensitySecureJsonData> {
  return {
    id: 7,
    uid: 'density-uid',
    orgId: 1,
    name: 'Density',
    type: 'substrate-density-datasource',
    typeName: 'Substrate Density',
    typeLogoUrl: '',
    access: 'proxy',
    url: '',
    user: '',
    basicAuth: false,
    basicAuthUser: '',
    isDefault: false,
    withCredentials: false,
    readOnly: false,
    version: 1,
    jsonData: {},
    secureJsonFields: {},
    secureJsonData: {},
    ...overrides,
  } as DataSourceSettings<DensityOptions, DensitySecureJsonData>;
}

type VariableValue = string | string[];

/**
 * A small TemplateSrv with Grafana's replace semantics for `$name` and
 * `${name}`: scopedVars win over dashboard variables, unknown names stay as
 * they are, a format function gets the raw value (an array for multi-value),
 * `csv` joins with commas and the default format of a multi-value is a glob.
 */
export class FakeTemplateSrv implements TemplateSrv {
  constructor(private readonly vars: Record<string, VariableValue> = {}) {}

  getVariables() {
    return Object.keys(this.vars).map((name) => ({ name, type: 'custom' })) as ReturnType<TemplateSrv['getVariables']>;
  }

  replace(target?: string, scopedVars?: ScopedVars, format?: string | Function): string {
    if (target === undefined) {
      return '';
    }
    return target.replace(/\$\{(\w+)\}|\$(\w+)/g, (match, braced: string | undefined, plain: string | undefined) => {
      const name = (braced ?? plain)!;
      const scoped = scopedVars?.[name];
      const value: VariableValue | undefined = scoped ? (scoped.value as VariableValue) : this.vars[name];
      if (value === undefined) {
        return match;
      }
      if (typeof format === 'function') {
        return format(value);
      }
      if (format === 'csv') {
        return Array.isArray(value) ? value.join(',') : value;
      }
      return Array.isArray(value) ? (value.length > 1 ? `{${value.join(',')}}` : (value[0] ?? '')) : value;
    });
  }

  containsTemplate(target?: string): boolean {
    return /\$\{?\w+/.test(target ?? '');
  }

  updateTimeRange(): void {}
}

/**
 * Combobox virtualises its menu from the scroll element's client size,
 * which jsdom reports as 0 (no rows would render). Call in beforeAll. The
 * height fits every query type's option (57 px each).
 */
export function giveElementsASize() {
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', { configurable: true, get: () => 1200 });
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', { configurable: true, get: () => 600 });
}
