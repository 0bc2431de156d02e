// Extends the create-plugin webpack config (.config/README.md, "Extending the
// Webpack config") with one thing: the provisioned dashboards live in the
// repository's top-level dashboards/ (one copy, shared with
// provisioning/ and docker-compose.yaml) and are copied into dist/dashboards/,
// where src/plugin.json's `includes` point.
import CopyWebpackPlugin from 'copy-webpack-plugin';
import path from 'path';
import type { Configuration } from 'webpack';
import { merge } from 'webpack-merge';

import grafanaConfig, { type Env } from './.config/webpack/webpack.config';

const config = async (env: Env): Promise<Configuration> => {
  const baseConfig = await grafanaConfig(env);
  return merge(baseConfig, {
    plugins: [
      new CopyWebpackPlugin({
        patterns: [{ from: path.resolve(process.cwd(), 'dashboards', '*.json'), to: 'dashboards/[name][ext]' }],
      }),
    ],
  });
};

export default config;
