// Package plugin is the Grafana adapter of the density engine: one
// datasource instance per Grafana datasource, a dispatch table with one
// handler per query type, frames, annotations, variables, resources, health
// and the caches of what they read. Every number comes from pkg/harvest (the
// same code as `density export`); this package only shapes it.
package plugin

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/instancemgmt"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
	"github.com/grafana/grafana-plugin-sdk-go/backend/resource/httpadapter"
	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/pkg/cluster"
	"github.com/substrate/density/pkg/harvest"
	"github.com/substrate/density/pkg/promql"
	"github.com/substrate/density/pkg/runs"
)

// The interfaces Grafana calls.
var (
	_ backend.QueryDataHandler      = (*Datasource)(nil)
	_ backend.CheckHealthHandler    = (*Datasource)(nil)
	_ backend.CallResourceHandler   = (*Datasource)(nil)
	_ instancemgmt.InstanceDisposer = (*Datasource)(nil)
)

// Datasource is one datasource instance. Settings are loaded and validated
// once, when Grafana creates the instance; an invalid configuration does
// not fail the instance: health reports it and every query answers with it,
// so the user sees which setting to fix.
type Datasource struct {
	settings    Settings
	settingsErr error

	prom     *promql.Client
	promErr  error
	httpc    *http.Client
	catalogs *runs.Catalogs
	storeErr error
	kube     kubernetes.Interface
	kubeErr  error

	// handlers is the dispatch table: query type to handler.
	handlers  map[string]handlerFunc
	resources backend.CallResourceHandler
	cache     caches
	// slots bounds the queries computing and the blocks being harvested at
	// once (Prometheus requests are bounded separately by the promql
	// client); a query waiting for a block holds none (see querySlot).
	slots chan struct{}

	now func() time.Time

	closeOnce sync.Once
}

// NewDatasource is the instance factory handed to datasource.Manage.
func NewDatasource(ctx context.Context, s backend.DataSourceInstanceSettings) (instancemgmt.Instance, error) {
	return newDatasource(ctx, s, time.Now)
}

func newDatasource(ctx context.Context, s backend.DataSourceInstanceSettings, now func() time.Time) (*Datasource, error) {
	d := &Datasource{now: now, catalogs: &runs.Catalogs{}}
	d.settings, d.settingsErr = LoadSettings(s)
	d.slots = make(chan struct{}, max(d.settings.MaxConcurrentQueries, 1))
	d.cache = d.newCaches()
	d.handlers = d.newHandlers()
	d.resources = httpadapter.New(d.resourceMux())
	if d.settingsErr != nil {
		log.DefaultLogger.FromContext(ctx).Warn("invalid datasource settings", "error", d.settingsErr)
		return d, nil
	}
	cfg := d.settings
	d.catalogs.MaxRange, d.catalogs.MaxRuns = cfg.MaxRangeDays*24*3600, cfg.MaxRunsPerQuery

	d.httpc, d.promErr = HTTPClient(ctx, s)
	if d.promErr == nil {
		d.prom, d.promErr = promql.New(promql.Config{
			URL:              cfg.PrometheusURL,
			HTTPClient:       d.httpc,
			InstantTimeout:   cfg.Timeout,
			RangeTimeout:     cfg.Timeout,
			MaxInFlight:      cfg.MaxConcurrentQueries,
			MaxResponseBytes: cfg.MaxResponseBytes,
		})
	}
	if d.prom != nil {
		d.catalogs.Discovery = runs.NewDiscovery(d.prom, cfg.UserCountQuery, cfg.RunGapSeconds)
		d.catalogs.DiscoverRuns = cfg.DiscoverRuns
	}
	if cfg.ResultsStore != "" {
		// A store that cannot be opened (missing directory, bad
		// credentials) leaves the other catalogs working; health and the
		// queries that need it say why.
		d.catalogs.Store, d.storeErr = runs.OpenStore(ctx, cfg.ResultsStore)
		if d.storeErr == nil {
			d.catalogs.Store.OnRowsRead(d.keepListedRows)
		}
	}
	if cfg.Kube.Access != cluster.ModeOff {
		d.kube, d.kubeErr = cluster.NewClient(cfg.Kube.access(cfg.Timeout))
	}
	return d, nil
}

// access converts the settings to pkg/cluster's form.
func (k Kube) access(timeout time.Duration) cluster.Access {
	a := cluster.Access{Mode: k.Access, KubeconfigPath: k.ConfigPath, Context: k.Context, URL: k.URL, Token: k.Token, Timeout: timeout}
	if k.Kubeconfig != "" {
		a.Kubeconfig = []byte(k.Kubeconfig)
	}
	if k.CACert != "" {
		a.CACert = []byte(k.CACert)
	}
	return a
}

// Dispose releases the instance's resources when Grafana replaces it.
func (d *Datasource) Dispose() {
	d.closeOnce.Do(func() {
		if d.catalogs != nil {
			_ = d.catalogs.Close()
		}
		if d.httpc != nil {
			d.httpc.CloseIdleConnections()
		}
	})
}

// selectors are the harvest selectors of the settings.
func (s Settings) selectors() harvest.Selectors {
	return harvest.Selectors{
		WorkerPool: s.WorkerPool, WorkerNamespace: s.WorkerNamespace, WorkerContainer: s.WorkerContainer,
		WorkerPodRegex: s.WorkerPodRegex, AteletNamespace: s.AteletNamespace, AteletContainer: s.AteletContainer,
	}
}

// clusterOptions are pkg/cluster's options of the settings.
func (s Settings) clusterOptions() cluster.Options {
	o := cluster.DefaultOptions()
	o.WorkerNamespace, o.WorkerContainer = s.WorkerNamespace, s.WorkerContainer
	if s.Timeout > 0 {
		o.Timeout = s.Timeout
	}
	return o
}

// CallResource serves GET /runs, /runs/{id} and /tests.
func (d *Datasource) CallResource(ctx context.Context, req *backend.CallResourceRequest, sender backend.CallResourceResponseSender) error {
	return d.resources.CallResource(ctx, req, sender)
}

// errorResponse maps an error to a response: downstream errors (the
// user's query, Prometheus, the store) get a 4xx/5xx status matching their
// kind; anything else is a plugin error (a bug).
func errorResponse(err error) backend.DataResponse {
	var qe *queryError
	if errors.As(err, &qe) {
		return backend.DataResponse{Error: err, Status: qe.status, ErrorSource: backend.ErrorSourceDownstream}
	}
	if backend.IsDownstreamError(err) {
		return backend.DataResponse{Error: err, Status: backend.StatusBadGateway, ErrorSource: backend.ErrorSourceDownstream}
	}
	return backend.DataResponse{Error: err, Status: backend.StatusInternal, ErrorSource: backend.ErrorSourcePlugin}
}

// queryError is a downstream error with the status it answers with.
type queryError struct {
	status backend.Status
	err    error
}

func (e *queryError) Error() string { return e.err.Error() }
func (e *queryError) Unwrap() error { return e.err }

func badRequest(format string, a ...any) error {
	return backend.DownstreamError(&queryError{status: backend.StatusBadRequest, err: fmt.Errorf(format, a...)})
}

func withStatus(status backend.Status, err error) error {
	return backend.DownstreamError(&queryError{status: status, err: err})
}
