// Package plugintest serves a datasource over Grafana's real plugin gRPC
// protocol for the tests of a test binary.
package plugintest

import (
	"fmt"
	"net"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/datasource"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/experimental/datasourcetest"
)

// Serve silences the SDK's logger (it logs every request) and serves the
// instances factory makes on a free 127.0.0.1 port. The SDK registers its
// gRPC metrics globally, so a test binary serves once and its tests share
// the client, each test with its own datasource instance.
func Serve(factory datasource.InstanceFactoryFunc) (datasourcetest.TestPlugin, error) {
	log.DefaultLogger = log.NewNullLogger()
	backend.Logger = log.DefaultLogger
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return datasourcetest.TestPlugin{}, fmt.Errorf("finding a free port for the plugin: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return datasourcetest.TestPlugin{}, err
	}
	return datasourcetest.Manage(factory, datasourcetest.ManageOpts{Address: addr})
}
