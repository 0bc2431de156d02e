package thanostest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// TestBinaryPathSaysHowToBuild checks the error for an absent binary names
// the build script.
func TestBinaryPathSaysHowToBuild(t *testing.T) {
	t.Setenv(EnvThanos, "")
	t.Setenv(EnvCache, t.TempDir())
	_, err := BinaryPath()
	if err == nil {
		t.Fatal("no error for an empty cache")
	}
	if !errors.Is(err, ErrNotBuilt) {
		t.Errorf("error %v does not wrap ErrNotBuilt", err)
	}
}

// TestStackDeduplicates starts the stack on a tiny file and checks Query
// answers one deduplicated series (not one per replica), and still answers
// with one sidecar stopped.
func TestStackDeduplicates(t *testing.T) {
	om := filepath.Join(t.TempDir(), "tiny.om")
	body := "# TYPE demo_total counter\n"
	now := time.Now().Unix() - 3600
	for i := int64(0); i < 20; i++ {
		body += "demo_total{job=\"x\"} " + itoa(i) + " " + itoa(now+i*15) + "\n"
	}
	body += "# EOF\n"
	if err := os.WriteFile(om, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	s := Start(t, om)
	at := itoa(now + 10*15)
	if n := seriesCount(t, s.URL, at); n != 1 {
		t.Errorf("deduplicated query returned %d series, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.StopSidecar(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n := seriesCount(t, s.URL, at); n != 1 {
		t.Errorf("with one sidecar stopped the query returned %d series, want 1", n)
	}
}

func seriesCount(t *testing.T, base, at string) int {
	t.Helper()
	q := url.Values{"query": {"demo_total"}, "time": {at}, "dedup": {"true"}}
	resp, err := http.Get(base + "/api/v1/query?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string `json:"status"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != "success" {
		t.Fatalf("query status %q", out.Status)
	}
	return len(out.Data.Result)
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
