// Package plugintest serves a datasource over Grafana's real plugin gRPC
// protocol for the tests of a test binary.
package plugintest

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"

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
	tp, _, err := ServeLogged(factory)
	return tp, err
}

// ServeLogged is Serve with the SDK's logger replaced by a Log, which keeps
// what is logged while a test records it (and drops it otherwise).
func ServeLogged(factory datasource.InstanceFactoryFunc) (datasourcetest.TestPlugin, *Log, error) {
	l := &Log{sink: &logSink{}}
	log.DefaultLogger = l
	backend.Logger = l
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return datasourcetest.TestPlugin{}, nil, fmt.Errorf("finding a free port for the plugin: %w", err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return datasourcetest.TestPlugin{}, nil, err
	}
	tp, err := datasourcetest.Manage(factory, datasourcetest.ManageOpts{Address: addr})
	return tp, l, err
}

// Log is an SDK logger that records every line (level, message and
// key-value pairs, formatted with %v) while at least one Record is open.
// Safe for concurrent use: it is installed once, before the plugin serves.
type Log struct {
	sink *logSink
	with []any
}

type logSink struct {
	mu        sync.Mutex
	recording int
	lines     []string
}

// Record starts keeping log lines; the returned func stops and returns the
// lines logged since (by every test running meanwhile), one per line.
func (l *Log) Record() func() string {
	s := l.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recording++
	start := len(s.lines)
	return func() string {
		s.mu.Lock()
		defer s.mu.Unlock()
		out := strings.Join(s.lines[start:], "\n")
		if s.recording--; s.recording == 0 {
			s.lines = nil
		}
		return out
	}
}

func (l *Log) add(level, msg string, args []any) {
	s := l.sink
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recording == 0 {
		return
	}
	var b strings.Builder
	b.WriteString(level + " " + msg)
	for _, a := range append(append([]any{}, l.with...), args...) {
		fmt.Fprintf(&b, " %v", a)
	}
	s.lines = append(s.lines, b.String())
}

func (l *Log) Debug(msg string, args ...any) { l.add("debug", msg, args) }
func (l *Log) Info(msg string, args ...any)  { l.add("info", msg, args) }
func (l *Log) Warn(msg string, args ...any)  { l.add("warn", msg, args) }
func (l *Log) Error(msg string, args ...any) { l.add("error", msg, args) }

// With returns a logger adding args to every line.
func (l *Log) With(args ...any) log.Logger {
	return &Log{sink: l.sink, with: append(append([]any{}, l.with...), args...)}
}

// Level is Debug: every line is kept.
func (l *Log) Level() log.Level { return log.Debug }

// FromContext is l: the request's attributes are not needed in tests.
func (l *Log) FromContext(context.Context) log.Logger { return l }
