// The gallery page: the plugin's editors drawn with Grafana's own UI kit and
// theme, outside Grafana. `?state=<id>&theme=light|dark` shows one state
// alone (what the browser test loads); without `state` every state of the
// theme is shown, with links to each. Built by `npm run build:gallery` into
// .gallery-dist/, never into dist/.
import React, { useEffect } from 'react';
import { createRoot } from 'react-dom/client';
import { createTheme, GrafanaTheme2 } from '@grafana/data';
import { setBackendSrv, setTemplateSrv } from '@grafana/runtime';
import { GlobalStyles, ThemeContext } from '@grafana/ui';

import { FakeTemplateSrv } from '../testing/fixtures';
import { backendIdle, galleryBackendSrv } from './backend';
import { GalleryState, PLANTED_SECRETS, STATES } from './states';

/** What the browser test reads from the page. */
interface GalleryApi {
  theme: 'light' | 'dark';
  states: Array<Pick<GalleryState, 'id' | 'editor' | 'title'>>;
  /** The ids of the states on the page. */
  shown: string[];
  planted: string[];
  /** True once the page has rendered and no fixture request is pending. */
  ready: () => boolean;
}

declare global {
  interface Window {
    gallery: GalleryApi;
  }
}

setBackendSrv(galleryBackendSrv);
setTemplateSrv(new FakeTemplateSrv({ run: 'sweep-1k/1700000000/c0ffee1', test: 'sweep-1k' }));

const params = new URLSearchParams(window.location.search);
const themeName = params.get('theme') === 'dark' ? 'dark' : 'light';
const theme = createTheme({ colors: { mode: themeName } });
const only = params.get('state');
const shown = only === null ? STATES : STATES.filter((s) => s.id === only);

let mounted = false;

window.gallery = {
  theme: themeName,
  states: STATES.map(({ id, editor, title }) => ({ id, editor, title })),
  shown: shown.map((s) => s.id),
  planted: Object.values(PLANTED_SECRETS),
  ready: () => mounted && backendIdle(),
};

function Section({ state, theme }: { state: GalleryState; theme: GrafanaTheme2 }) {
  return (
    <section data-gallery-state={state.id} style={{ marginBottom: theme.spacing(4) }}>
      <h2 style={{ ...theme.typography.h5, margin: theme.spacing(0, 0, 1) }}>
        {state.editor}: {state.title}
      </h2>
      <div
        data-gallery-editor={state.id}
        style={{
          width: 960,
          padding: theme.spacing(2),
          background: theme.colors.background.primary,
          border: `1px solid ${theme.colors.border.weak}`,
          borderRadius: theme.shape.radius.default,
        }}
      >
        {state.render()}
      </div>
    </section>
  );
}

function Gallery() {
  useEffect(() => {
    mounted = true;
  }, []);
  const other = themeName === 'light' ? 'dark' : 'light';
  return (
    <ThemeContext.Provider value={theme}>
      <GlobalStyles />
      <main style={{ padding: theme.spacing(2) }}>
        {only === null && (
          <nav style={{ marginBottom: theme.spacing(3) }}>
            <h1 style={theme.typography.h3}>Substrate Density editors ({themeName} theme)</h1>
            <a href={`?theme=${other}`}>Show the {other} theme</a>
            <ul>
              {STATES.map((s) => (
                <li key={s.id}>
                  <a href={`?state=${s.id}&theme=${themeName}`}>{s.id}</a>
                </li>
              ))}
            </ul>
          </nav>
        )}
        {shown.length === 0 && <p role="alert">No state {only}</p>}
        {shown.map((s) => (
          <Section key={s.id} state={s} theme={theme} />
        ))}
      </main>
    </ThemeContext.Provider>
  );
}

createRoot(document.getElementById('root')!).render(<Gallery />);
