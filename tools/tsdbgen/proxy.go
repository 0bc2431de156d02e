package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Request is one request the proxy forwarded (one JSON line).
type Request struct {
	Path    string  `json:"path"`
	Query   string  `json:"query"`
	Time    float64 `json:"time,omitempty"`
	Start   float64 `json:"start,omitempty"`
	End     float64 `json:"end,omitempty"`
	Step    float64 `json:"step,omitempty"`
	Status  int     `json:"status"`
	Bytes   int64   `json:"bytes"`
	Millis  float64 `json:"ms"`
	Refused bool    `json:"refused,omitempty"` // refused for the sample budget
	Error   string  `json:"error,omitempty"`   // start of a non-200 answer
}

// Points is the number of evaluation steps of a range request, i.e. the
// points each series of its answer can have (Prometheus refuses > 11,000).
func (r Request) Points() int64 {
	if r.Step <= 0 {
		return 0
	}
	return int64(math.Floor((r.End-r.Start)/r.Step)) + 1
}

type recorder struct {
	upstream string
	mu       sync.Mutex
	enc      *json.Encoder
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	form, _ := url.ParseQuery(r.URL.RawQuery)
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		if bf, err := url.ParseQuery(string(body)); err == nil {
			for k, v := range bf {
				form[k] = append(form[k], v...)
			}
		}
	}
	out, err := http.NewRequestWithContext(r.Context(), r.Method, rec.upstream+r.URL.RequestURI(), bytes.NewReader(body)) // #nosec G704 -- forwards only to the upstream URL the operator passed on the command line
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	f := func(k string) float64 { v, _ := strconv.ParseFloat(form.Get(k), 64); return v }
	req := Request{Path: r.URL.Path, Query: form.Get("query")}
	if strings.HasSuffix(r.URL.Path, "/query_range") {
		req.Start, req.End, req.Step = f("start"), f("end"), f("step")
	} else {
		req.Time = f("time")
	}
	resp, err := http.DefaultTransport.RoundTrip(out)
	if err != nil {
		req.Status, req.Error = http.StatusBadGateway, err.Error()
		http.Error(w, err.Error(), http.StatusBadGateway)
	} else {
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		var head bytes.Buffer
		req.Bytes, _ = io.Copy(w, io.TeeReader(resp.Body, &capWriter{w: &head, left: 4096}))
		resp.Body.Close()
		req.Status = resp.StatusCode
		if resp.StatusCode != http.StatusOK {
			req.Error = errorText(head.Bytes(), resp.Header.Get("Content-Encoding"))
			req.Refused = strings.Contains(req.Error, "too many samples")
		}
	}
	req.Millis = float64(time.Since(t0).Microseconds()) / 1000
	rec.mu.Lock()
	_ = rec.enc.Encode(req)
	rec.mu.Unlock()
}

// errorText is the start of an error answer, decompressed when the client
// asked for gzip (Go's transport does, and the proxy passes the encoding
// through): a refusal for the sample budget is recognised by its text.
func errorText(head []byte, encoding string) string {
	if encoding != "gzip" {
		return string(head)
	}
	zr, err := gzip.NewReader(bytes.NewReader(head))
	if err != nil {
		return fmt.Sprintf("(gzip answer: %v)", err)
	}
	text, _ := io.ReadAll(io.LimitReader(zr, 4096)) // a cut stream still yields its start
	return string(text)
}

type capWriter struct {
	w    io.Writer
	left int
}

func (c *capWriter) Write(p []byte) (int, error) {
	if c.left > 0 {
		k := min(len(p), c.left)
		_, _ = c.w.Write(p[:k]) // an in-memory buffer
		c.left -= k
	}
	return len(p), nil
}

// cmdProxy serves until interrupted, appending one JSON line per request.
func cmdProxy(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("proxy", flag.ContinueOnError)
	upstream := fs.String("upstream", "", "Prometheus base URL")
	logPath := fs.String("log", "", "JSON lines file, one per request")
	addrFile := fs.String("addr-file", "", "file to write the proxy's base URL into once it listens")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *upstream == "" || *logPath == "" || *addrFile == "" {
		return errors.New("--upstream, --log and --addr-file are required")
	}
	lf, err := os.Create(*logPath)
	if err != nil {
		return fmt.Errorf("creating %s: %w", *logPath, err)
	}
	defer lf.Close()
	// Unbuffered: one write per request, so the file is complete while the
	// proxy still runs.
	rec := &recorder{upstream: strings.TrimRight(*upstream, "/"), enc: json.NewEncoder(lf)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	srv := &http.Server{Handler: rec, ReadHeaderTimeout: 10 * time.Second}
	if err := os.WriteFile(*addrFile, []byte("http://"+l.Addr().String()+"\n"), 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		return err
	}
	go func() {
		<-ctx.Done()
		// ctx is done: the shutdown gets its own deadline, ctx's values kept.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx) // Serve's return says how it ended
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Usage is a command's resource use (cmdExec's output).
type Usage struct {
	Command    []string `json:"command"`
	ExitCode   int      `json:"exit_code"`
	WallS      float64  `json:"wall_s"`
	UserS      float64  `json:"user_s"`
	SysS       float64  `json:"sys_s"`
	PeakRSSMiB float64  `json:"peak_rss_mib"`
}

// cmdExec runs a command and records its wall time, CPU and peak RSS
// (getrusage of the child), passing its output through.
func cmdExec(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	out := fs.String("rusage", "", "JSON file for the usage")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cmdArgs := fs.Args()
	if *out == "" || len(cmdArgs) == 0 {
		return errors.New("usage: tsdbgen exec --rusage FILE -- CMD ARGS...")
	}
	cmd := exec.CommandContext(ctx, cmdArgs[0], cmdArgs[1:]...) // #nosec G204 -- runs the binary the harness or operator was given, arguments as a list (no shell)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	t0 := time.Now()
	runErr := cmd.Run()
	u := Usage{Command: cmdArgs, WallS: time.Since(t0).Seconds()}
	if cmd.ProcessState == nil {
		return fmt.Errorf("running %s: %w", cmdArgs[0], runErr)
	}
	u.ExitCode = cmd.ProcessState.ExitCode()
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		u.UserS = time.Duration(ru.Utime.Nano()).Seconds()
		u.SysS = time.Duration(ru.Stime.Nano()).Seconds()
		u.PeakRSSMiB = float64(ru.Maxrss) / 1024 // KiB on Linux
	}
	b, err := json.MarshalIndent(u, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil { // #nosec G306 -- files written are artifacts or fixtures for others to read
		return err
	}
	if runErr != nil {
		return fmt.Errorf("%s: %w", cmdArgs[0], runErr)
	}
	return nil
}

// cmdFetch GETs a URL and prints the body, retrying until it answers 200 or
// --wait runs out (readiness checks and /metrics dumps without curl).
func cmdFetch(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("fetch", flag.ContinueOnError)
	wait := fs.Duration("wait", 0, "keep retrying this long until the URL answers 200")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: tsdbgen fetch [--wait D] URL")
	}
	deadline := time.Now().Add(*wait)
	for {
		err := fetchOnce(ctx, fs.Arg(0), os.Stdout)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func fetchOnce(ctx context.Context, u string, w io.Writer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
