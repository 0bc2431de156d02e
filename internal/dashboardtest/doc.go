// Package dashboardtest tests the repository's Grafana assets
// (dashboards/*.json, provisioning/, src/plugin.json and
// docker-compose.yaml) against the plugin. There is no Grafana server here,
// so its tests do what Grafana does with the provisioned dashboards:
//
//  1. Static: decode every dashboards/*.json strictly with the Grafana
//     foundation SDK's dashboard types (plus a strict decoder for this
//     plugin's query model), check every datasource reference against
//     provisioning/datasources, every $variable against the dashboard's
//     variables, every query's type and options, data-link targets, unique
//     panel ids and the grid, and that src/plugin.json, the provisioning
//     provider and docker-compose.yaml agree on where the dashboards are.
//  2. Smoke: serve the datasource (plugin.NewDatasource) over Grafana's
//     plugin gRPC protocol (datasourcetest) with the provisioned settings,
//     against a real Prometheus loaded with the demo run and a file://
//     results store laid out the way docker-compose's demo-init lays it out
//     (the export's artifacts included). Variables are resolved by running
//     their queries, every panel's queries are sent as Grafana sends them,
//     the panel's transformations are applied, and the result must have the
//     shape the visualization needs, with non-null values where the demo run
//     has data and nulls (with a notice) where it cannot (no Kubernetes).
//     -short skips it.
//
// The package holds tests only; it is its own package so that the
// repository's assets are tested through the plugin's exported API.
package dashboardtest
