// Command gpx_density is the Substrate Density Grafana datasource backend.
// Grafana starts it and talks to it over the plugin gRPC protocol;
// datasource.Manage creates one plugin.Datasource per configured
// datasource and disposes it when its settings change.
package main

import (
	"os"

	"github.com/grafana/grafana-plugin-sdk-go/backend/datasource"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"

	"github.com/substrate/density/pkg/plugin"
)

func main() {
	if err := datasource.Manage("substrate-density-datasource", plugin.NewDatasource, datasource.ManageOpts{}); err != nil {
		log.DefaultLogger.Error("serving the datasource", "error", err)
		os.Exit(1)
	}
}
