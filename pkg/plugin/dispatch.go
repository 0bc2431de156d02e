package plugin

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/backend"
	"github.com/grafana/grafana-plugin-sdk-go/backend/log"
)

// handlerFunc answers one query.
type handlerFunc func(ctx context.Context, pc backend.PluginContext, q backend.DataQuery) backend.DataResponse

// queryHandler is a query type of datasource.md and the method answering it.
type queryHandler struct {
	queryType string
	handle    func(d *Datasource, ctx context.Context, pc backend.PluginContext, q backend.DataQuery) backend.DataResponse
}

// queryHandlers is the one list of query types, each with its handler, in
// the order error messages name them.
func queryHandlers() []queryHandler {
	return []queryHandler{
		{QueryRuns, (*Datasource).handleRuns},
		{QueryPacking, (*Datasource).handlePacking},
		{QueryPSI, (*Datasource).handlePSI},
		{QuerySnapshots, (*Datasource).handleSnapshots},
		{QueryActiveActors, (*Datasource).handleActiveActors},
		{QueryWorkingSet, (*Datasource).handleWorkingSet},
		{QueryOOMEvents, (*Datasource).handleOOMEvents},
		{QueryClusterFacts, (*Datasource).handleClusterFacts},
		{QueryFrontier, (*Datasource).handleFrontier},
		{QuerySummary, (*Datasource).handleSummary},
		{QueryTests, (*Datasource).handleTests},
		{QueryAnnotations, (*Datasource).handleAnnotations},
		{QueryGates, (*Datasource).handleGates},
		{QueryCompare, (*Datasource).handleCompare},
		{QueryChangePoints, (*Datasource).handleChangePoints},
		{QueryLadder, (*Datasource).handleLadder},
		{QueryPhases, (*Datasource).handlePhases},
		{QueryFreshness, (*Datasource).handleFreshness},
	}
}

// QueryTypes lists every query type the datasource answers (a fresh slice),
// in the order of datasource.md "Query model": the valid values of a
// query's queryType, for anything that writes queries (dashboards).
func QueryTypes() []string {
	hs := queryHandlers()
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.queryType
	}
	return out
}

// newHandlers is the instance's dispatch table: query type to handler.
func (d *Datasource) newHandlers() map[string]handlerFunc {
	hs := queryHandlers()
	out := make(map[string]handlerFunc, len(hs))
	for _, h := range hs {
		out[h.queryType] = func(ctx context.Context, pc backend.PluginContext, q backend.DataQuery) backend.DataResponse {
			return h.handle(d, ctx, pc, q)
		}
	}
	return out
}

// QueryData answers every query of the request concurrently, each straight
// from its type's handler, so that one failing query never fails its
// neighbours and a slow one never holds the others up; the instance's slots
// bound how many compute at once.
func (d *Datasource) QueryData(ctx context.Context, req *backend.QueryDataRequest) (*backend.QueryDataResponse, error) {
	out := backend.NewQueryDataResponse()
	var (
		mu sync.Mutex
		wg sync.WaitGroup
	)
	for _, q := range req.Queries {
		wg.Go(func() {
			start := time.Now()
			resp := d.queryOne(ctx, req.PluginContext, q)
			logQuery(ctx, q, resp, time.Since(start))
			mu.Lock()
			out.Responses[q.RefID] = resp
			mu.Unlock()
		})
	}
	wg.Wait()
	return out, nil
}

// queryOne answers one query: with the settings error when the settings are
// invalid, a 400 naming the valid types when its type is unknown or
// missing, and otherwise its handler's answer computed while holding a
// slot. A panic is a plugin error of this query alone.
func (d *Datasource) queryOne(ctx context.Context, pc backend.PluginContext, q backend.DataQuery) (resp backend.DataResponse) {
	defer func() {
		if r := recover(); r != nil {
			log.DefaultLogger.FromContext(ctx).Error("query panicked", "refId", q.RefID, "queryType", q.QueryType, "panic", r)
			resp = errorResponse(backend.PluginError(fmt.Errorf("internal error answering query %s (a bug; please report): %v", q.RefID, r)))
		}
	}()
	if d.settingsErr != nil {
		return errorResponse(badRequest("the datasource settings are invalid: %w", d.settingsErr))
	}
	h, ok := d.handlers[q.QueryType]
	if !ok {
		// The user's (or the dashboard's) mistake, not a plugin error.
		m, err := parseQuery(q) // malformed JSON says so, not "no queryType"
		if err != nil {
			return errorResponse(err)
		}
		return unknownTypeResponse(m.QueryType)
	}
	ctx, release, err := takeSlot(ctx, d.slots)
	if err != nil {
		return errorResponse(backend.DownstreamError(fmt.Errorf("query %s: %w", q.RefID, err)))
	}
	defer release()
	return h(ctx, pc, q)
}

// logQuery logs each answer with the request's context (Grafana's
// trace and user attributes); failures at warn level.
func logQuery(ctx context.Context, q backend.DataQuery, resp backend.DataResponse, took time.Duration) {
	logger := log.DefaultLogger.FromContext(ctx)
	if resp.Error != nil {
		logger.Warn("query failed", "refId", q.RefID, "queryType", q.QueryType, "status", int(resp.Status),
			"source", string(resp.ErrorSource), "error", resp.Error.Error(), "duration", took)
		return
	}
	logger.Debug("query answered", "refId", q.RefID, "queryType", q.QueryType, "frames", len(resp.Frames), "duration", took)
}
