package cluster_test

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/substrate/density/internal/kubefake"
	"github.com/substrate/density/pkg/cluster"
)

func logServer(t *testing.T, pods []kubefake.LogPod, listFail ...string) (*kubefake.LogServer, kubernetes.Interface) {
	t.Helper()
	s := kubefake.NewLogServer(pods, listFail...)
	t.Cleanup(s.Close)
	c, err := s.Client()
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func TestReadPodLogs(t *testing.T) {
	atelet := map[string]string{"app": "atelet"}
	worker := map[string]string{"ate.dev/worker-pool": "benchmark-ateom"}
	big := strings.Repeat("x", 3000) + "\n"
	pods := []kubefake.LogPod{
		{Namespace: "benchmark-workloads", Name: "w-b", Node: "n1", Labels: worker, Logs: map[string]string{"ateom": "wb\n"}},
		{Namespace: "ate-system", Name: "atelet-b", Node: "n2", Labels: atelet, Logs: map[string]string{"atelet": "ab\n"}},
		{Namespace: "ate-system", Name: "atelet-a", Node: "n1", Labels: atelet, Restarts: map[string]int32{"atelet": 2, "sidecar": 0},
			Logs: map[string]string{"atelet": "aa\n", "atelet/previous": "aa-prev\n"}},
		{Namespace: "ate-system", Name: "other", Node: "n1", Labels: map[string]string{"app": "x"}, Logs: map[string]string{"atelet": "no\n"}},
		{Namespace: "benchmark-workloads", Name: "w-a", Node: "n1", Labels: worker, Restarts: map[string]int32{"ateom": 1}, Logs: map[string]string{"ateom": "wa\n"}},
		{Namespace: "benchmark-workloads", Name: "w-c-500", Node: "n1", Labels: worker, Status: 500},
		{Namespace: "benchmark-workloads", Name: "w-d-slow", Node: "n1", Labels: worker, Slow: true, Logs: map[string]string{"ateom": "first\nsecond\n"}},
		{Namespace: "benchmark-workloads", Name: "w-e-big", Node: "n1", Labels: worker, Logs: map[string]string{"ateom": big + big}},
		{Namespace: "benchmark-workloads", Name: "w-f-pending", Labels: worker},
	}
	srv, c := logServer(t, pods)
	since := time.Date(2026, 9, 23, 9, 59, 0, 0, time.UTC)
	var got []string
	res := cluster.ReadPodLogs(context.Background(), c, cluster.LogOptions{
		Since: since, ReadTimeout: 500 * time.Millisecond, MaxBytes: 4000,
	}, func(r io.Reader, src cluster.LogSource) error {
		var b bytes.Buffer
		if _, err := io.Copy(&b, r); err != nil {
			return err
		}
		got = append(got, src.String()+": "+strings.TrimSpace(b.String()[:min(b.Len(), 10)]))
		return nil
	})
	want := []string{
		"ate-system/atelet-a: aa",
		"ate-system/atelet-a (previous): aa-prev",
		"ate-system/atelet-b: ab",
		"benchmark-workloads/w-a: wa",
		"benchmark-workloads/w-b: wb",
		"benchmark-workloads/w-e-big: " + strings.Repeat("x", 10),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("read:\n%s", strings.Join(got, "\n"))
	}
	if res.PodsRead != 5 || res.PodsFailed != 2 {
		t.Errorf("read %d failed %d", res.PodsRead, res.PodsFailed)
	}
	notices := strings.Join(res.Notices, "\n")
	for _, w := range []string{
		"previous log of pod benchmark-workloads/w-a (previous)", // missing previous: a notice, still read
		"pod benchmark-workloads/w-c-500: 500",
		"pod benchmark-workloads/w-d-slow: timed out",
		"the log of pod benchmark-workloads/w-e-big was cut",
	} {
		if !strings.Contains(notices, w) {
			t.Errorf("no notice %q in:\n%s", w, notices)
		}
	}
	st := url.QueryEscape(since.Format(time.RFC3339))
	wantReqs := []string{
		"/api/v1/namespaces/ate-system/pods?labelSelector=app%3Datelet",
		"/api/v1/namespaces/ate-system/pods/atelet-a/log?container=atelet&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/ate-system/pods/atelet-a/log?container=atelet&limitBytes=4000&previous=true&sinceTime=" + st,
		"/api/v1/namespaces/ate-system/pods/atelet-b/log?container=atelet&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods?labelSelector=ate.dev%2Fworker-pool",
		"/api/v1/namespaces/benchmark-workloads/pods/w-a/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-a/log?container=ateom&limitBytes=4000&previous=true&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-b/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-c-500/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-d-slow/log?container=ateom&limitBytes=4000&sinceTime=" + st,
		"/api/v1/namespaces/benchmark-workloads/pods/w-e-big/log?container=ateom&limitBytes=4000&sinceTime=" + st,
	}
	if reqs := srv.Requests(); !reflect.DeepEqual(reqs, wantReqs) {
		t.Errorf("requests:\n%s", strings.Join(reqs, "\n"))
	}
}

func TestReadPodLogsListFailures(t *testing.T) {
	_, c := logServer(t, nil, "ate-system", "benchmark-workloads")
	res := cluster.ReadPodLogs(context.Background(), c, cluster.LogOptions{}, func(io.Reader, cluster.LogSource) error { return nil })
	if res.PodsRead != 0 || res.PodsFailed != 2 || len(res.Notices) != 2 || !strings.Contains(res.Notices[0], "403") {
		t.Fatalf("%+v", res)
	}
}
