// force timezone to UTC to allow tests to work regardless of local timezone
// generally used by snapshots, but can affect specific tests
process.env.TZ = 'UTC';

const base = require('./.config/jest.config');

// The scaffold's swc transform, reused for the extra patterns below.
const swcTransform = base.transform['^.+\\.(t|j)sx?$'];

module.exports = {
  // Jest configuration provided by Grafana scaffolding
  ...base,
  transform: {
    ...base.transform,
    // d3-* (pulled in by @grafana/data) ship .mjs files; jest must compile them too.
    '^.+\\.mjs$': swcTransform,
  },
  // Editor tests render Grafana's real components; on a shared 2-core machine a
  // single interaction can take seconds, so the 5 s default flakes under load.
  testTimeout: 30_000,
};
