// Extends the create-plugin webpack config (.config/README.md, "Extending the
// Webpack config") with two things:
//
//   - the provisioned dashboards live in the repository's top-level
//     dashboards/ (one copy, shared with provisioning/ and
//     docker-compose.yaml) and are copied into dist/dashboards/, where
//     src/plugin.json's `includes` point;
//   - `--env gallery` builds the editor gallery (src/gallery/) instead: a
//     standalone page with React and Grafana's packages bundled in (Grafana
//     provides them to the plugin, so the plugin build keeps them external),
//     written to .gallery-dist/ and never to dist/.
import CopyWebpackPlugin from 'copy-webpack-plugin';
import path from 'path';
import webpack, { type Configuration } from 'webpack';
import { merge } from 'webpack-merge';

import grafanaConfig, { type Env } from './.config/webpack/webpack.config';

/** Where `npm run build:gallery` writes the gallery page (gitignored). */
export const GALLERY_DIR = '.gallery-dist';

const config = async (env: Env): Promise<Configuration> => {
  const baseConfig = await grafanaConfig(env);
  if (env.gallery) {
    return galleryConfig(baseConfig);
  }
  return merge(baseConfig, {
    plugins: [
      new CopyWebpackPlugin({
        patterns: [{ from: path.resolve(process.cwd(), 'dashboards', '*.json'), to: 'dashboards/[name][ext]' }],
      }),
    ],
  });
};

/**
 * The gallery keeps the plugin build's loaders and resolution and replaces
 * the rest: one entry, nothing external, a plain script instead of an AMD
 * module, and none of the plugin's dist/ plugins (copying plugin.json,
 * rewriting dist/, signing hashes). It is a production build for tree
 * shaking (the whole of @grafana/ui would be bundled otherwise), not
 * minified, with React's development build so its warnings reach the console
 * the browser test reads.
 */
function galleryConfig(base: Configuration): Configuration {
  const root = process.cwd();
  return {
    cache: {
      type: 'filesystem',
      name: 'gallery',
      buildDependencies: {
        config: [
          path.resolve(root, 'webpack.config.ts'),
          path.resolve(root, '.config', 'webpack', 'webpack.config.ts'),
        ],
      },
    },
    context: base.context,
    devtool: false,
    entry: { gallery: './gallery/index.tsx' },
    mode: 'production',
    module: base.module,
    optimization: { minimize: false, nodeEnv: 'development' },
    output: {
      path: path.resolve(root, GALLERY_DIR),
      filename: '[name].js',
      publicPath: '',
      clean: true,
    },
    performance: { hints: false },
    plugins: [
      new CopyWebpackPlugin({
        patterns: [
          { from: 'gallery/index.html', to: '.' },
          // Icon fetches its SVGs from public/build/img/icons/ (Grafana serves them there).
          {
            from: path.resolve(root, 'node_modules', '@grafana', 'ui', 'dist', 'public', 'img', 'icons'),
            to: 'public/build/img/icons',
          },
        ],
      }),
      // Swapped before resolving, so the stand-in gets the TypeScript loader.
      new webpack.NormalModuleReplacementPlugin(
        /^\.\/fonts\.mjs$/,
        (resource: { context: string; request: string }) => {
          if (/@grafana[\\/]ui[\\/]dist[\\/]esm[\\/]themes[\\/]GlobalStyles$/.test(resource.context)) {
            resource.request = path.resolve(root, 'src', 'gallery', 'fonts.ts');
          }
        }
      ),
    ],
    resolve: base.resolve,
  };
}

export default config;
