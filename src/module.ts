import { DataSourcePlugin } from '@grafana/data';

import { ConfigEditor } from './components/ConfigEditor';
import { QueryEditor } from './components/QueryEditor';
import { DataSource } from './datasource';
import { DensityOptions, DensityQuery, DensitySecureJsonData } from './types';

// Variable and annotation editors are wired through DataSource.variables and
// DataSource.annotations.
export const plugin = new DataSourcePlugin<DataSource, DensityQuery, DensityOptions, DensitySecureJsonData>(DataSource)
  .setConfigEditor(ConfigEditor)
  .setQueryEditor(QueryEditor);
